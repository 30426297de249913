// ania/history/archive_search-inl.hpp -- the definitions of <ania/history/archive_search.hpp>.
// Header-only mode includes this from there; compiled mode compiles it once, in the library (see
// <ania/detail/linkage.hpp>).
// SPDX-License-Identifier: MIT
#pragma once

#include <ania/detail/linkage.hpp>
#if !ANIA_HEADER_ONLY && !defined(ANIA_BUILDING_LIBRARY)
static_assert(false, "compiled mode: the library defines what <ania/history/archive_search-inl.hpp> defines; include <ania/history/archive_search.hpp>");
#endif

#include <algorithm>
#include <limits>

#include <ania/error.hpp>

#include <ania/history/archive_search.hpp>
#include <ania/json.hpp>
#include <ania/memory/indexer.hpp>
#include <ania/memory/keyword_search.hpp>
#include <ania/memory/scope_index.hpp>
#include <ania/memory/similarity.hpp>
#include <ania/memory/tokenize.hpp>
#include <ania/memory/tools-inl.hpp>
#include <ania/text/utf8.hpp>

namespace ania {

/// One session's archive as searched: the archived messages and their index (entries parallel to rows; the
/// entries' content is dropped once indexed: the index keeps the lower-cased text it searches).
struct archive_index::session_index {
    std::mutex mutex;
    memory::detail::scope_index si;
    std::vector<archived_message> rows;
    std::int64_t first_seq = 0, next_seq = 0;
    bool loaded = false;

    void add(const memory::detail::indexer<memory::cjk_bigram_tokenizer>& ix, archived_message m) {
        memory::entry e;
        e.content = searchable_text(m.msg);
        memory::detail::indexed_entry x = ix.make(si.vocab, e);
        e.content = {};
        si.push_back(std::move(e), std::move(x));
        rows.push_back(std::move(m));
    }
};

namespace detail {
inline const memory::cjk_bigram_tokenizer archive_tokenizer{};
inline const memory::detail::indexer<memory::cjk_bigram_tokenizer> archive_indexer(archive_tokenizer,
                                                                                   memory::exact_duplicate_fold::white_space);
} // namespace detail

ANIA_INLINE archive_index::archive_index(reader read, std::size_t max_sessions)
    : read_(read ? std::move(read) : throw error(errc::invalid_argument, "archive_index: no reader")),
      max_sessions_(std::max<std::size_t>(max_sessions, 1)) {}

ANIA_INLINE archive_index::~archive_index() = default;

ANIA_INLINE std::size_t archive_index::resident() const {
    std::lock_guard lock(mutex_);
    return sessions_.size();
}

ANIA_INLINE std::shared_ptr<archive_index::session_index> archive_index::index_of(std::string_view session) {
    std::lock_guard lock(mutex_);
    const std::string key(session);
    if (const auto it = sessions_.find(key); it != sessions_.end()) {
        lru_.splice(lru_.begin(), lru_, it->second.at);
        return it->second.index;
    }
    while (sessions_.size() >= max_sessions_) {  // a search in progress keeps its index alive (shared)
        sessions_.erase(lru_.back());
        lru_.pop_back();
    }
    lru_.push_front(key);
    auto index = std::make_shared<session_index>();
    sessions_.emplace(key, slot{index, lru_.begin()});
    return index;
}

ANIA_INLINE archive_search_result archive_index::search(std::string_view session, std::string_view query, std::size_t limit) {
    const std::shared_ptr<session_index> x = index_of(session);
    std::lock_guard lock(x->mutex);
    // What was archived since the last search; the first search reads everything.
    archive_slice fresh = read_(session, x->loaded ? x->next_seq : 0, whole_archive);
    const bool reset = x->loaded && (fresh.next_seq < x->next_seq || fresh.first_seq > x->first_seq);
    if (reset) {
        if (fresh.next_seq < x->next_seq) {  // renumbered under us (a store recreated): read it all again
            fresh = read_(session, 0, whole_archive);
            x->rows.clear();
        }
        // The oldest went to the cap or a clear: keep the rest, index again (rare: once per compaction at most).
        std::vector<archived_message> kept;
        for (archived_message& m : x->rows)
            if (m.seq >= fresh.first_seq) kept.push_back(std::move(m));
        x->si = {};
        x->rows.clear();
        for (archived_message& m : kept) x->add(detail::archive_indexer, std::move(m));
    }
    for (archived_message& m : fresh.messages)
        if (m.seq >= fresh.first_seq && (x->rows.empty() || m.seq > x->rows.back().seq)) x->add(detail::archive_indexer, std::move(m));
    x->loaded = true;
    x->first_seq = fresh.first_seq;
    x->next_seq = fresh.next_seq;

    archive_search_result out;
    out.first_seq = x->first_seq;
    out.next_seq = x->next_seq;
    if (x->rows.empty() || limit == 0 || text::trim(query).empty()) return out;
    x->si.ensure_postings(memory::dice_similarity{});
    const std::vector<double> scores = memory::detail::keyword_scores(x->si, detail::archive_tokenizer, query, {});
    std::vector<std::uint32_t> hit;
    for (std::uint32_t i = 0; i < scores.size(); ++i)
        if (scores[i] > 0) hit.push_back(i);
    const auto better = [&](std::uint32_t a, std::uint32_t b) { return scores[a] != scores[b] ? scores[a] > scores[b] : a > b; };
    const std::size_t n = std::min(limit, hit.size());
    std::partial_sort(hit.begin(), hit.begin() + static_cast<std::ptrdiff_t>(n), hit.end(), better);
    out.hits.reserve(n);
    for (std::size_t k = 0; k < n; ++k) {
        const archived_message& m = x->rows[hit[k]];
        out.hits.push_back({m.seq, m.archived_at, m.msg, scores[hit[k]]});
    }
    return out;
}

ANIA_INLINE std::string searchable_text(const message& m) {
    std::string out = m.text();
    for (const tool_call& c : m.tool_calls) {
        if (!out.empty()) out += ' ';
        out += c.name;
        out += ' ';
        out += c.arguments;
    }
    return out;
}

namespace detail {

/// "YYYY-MM-DDTHH:MM:SSZ" of a stored timestamp (the fraction is noise to a model).
inline std::string archive_time(std::string_view t) {
    return t.size() >= 19 ? std::string(t.substr(0, 19)) + "Z" : std::string(t);
}

inline std::string archive_line(const archive_tool_replies& r, std::int64_t seq, std::string_view time, const message& m,
                                std::size_t max_runes) {
    std::string text(text::truncate_runes(searchable_text(m), max_runes));
    return memory::detail::fill(r.line, {{"seq", std::to_string(seq)},
                                         {"time", archive_time(time)},
                                         {"role", std::string(to_string(m.role))},
                                         {"text", std::move(text)}});
}

/// An integer argument in [lo, hi] (clamped), or `fallback` when absent.
inline std::int64_t int_argument(const json& a, const char* key, std::int64_t fallback, std::int64_t lo, std::int64_t hi) {
    const auto it = a.find(key);
    if (it == a.end() || it->is_null()) return fallback;
    std::int64_t v;
    if (it->is_number_integer()) v = it->get<std::int64_t>();
    else if (it->is_number_unsigned()) v = hi;  // past int64: as large as allowed
    else throw memory::detail::bad_arguments(std::string(key) + " must be an integer");
    return std::clamp(v, lo, hi);
}

} // namespace detail

ANIA_INLINE std::vector<tool> make_archive_tools(archive_index& index, std::string session, archive_tool_replies replies) {
    auto shared = std::make_shared<const archive_tool_replies>(std::move(replies));
    auto key = std::make_shared<const std::string>(std::move(session));
    const auto guard = [shared](auto&& body) {
        return [shared, body](std::string_view args) -> std::string {
            try {
                return body(memory::detail::parse_arguments(args));
            } catch (const memory::detail::bad_arguments& e) {
                return memory::detail::fill(shared->bad_arguments, {{"error", text::quote_for_message(e.what(), 200)}});
            } catch (const std::exception& e) {
                return memory::detail::fill(shared->failed, {{"error", text::quote_for_message(e.what(), 200)}});
            }
        };
    };
    const auto dropped_note = [shared](std::int64_t first) {
        return first > 0 ? "\n" + memory::detail::fill(shared->dropped, {{"dropped", std::to_string(first)}}) : std::string();
    };
    std::vector<tool> tools;
    const json str = json{{"type", "string"}};
    tools.push_back({"history_search", shared->search_description,
                     memory::detail::schema({{"query", str}, {"limit", json{{"type", "integer"}, {"minimum", 1}, {"maximum", 20}}}}, {"query"}),
                     guard([&index, key, shared, dropped_note](const json& a) {
                         const auto query = memory::detail::opt_string(a, "query");
                         if (!query || text::trim(*query).empty()) throw memory::detail::bad_arguments("query is required");
                         const auto limit = static_cast<std::size_t>(detail::int_argument(a, "limit", 5, 1, 20));
                         const archive_search_result r = index.search(*key, *query, limit);
                         if (r.first_seq == r.next_seq) return shared->empty + dropped_note(r.first_seq);
                         if (r.hits.empty()) return shared->none + dropped_note(r.first_seq);
                         std::string out = memory::detail::fill(shared->found, {{"n", std::to_string(r.hits.size())}});
                         for (const archive_hit& h : r.hits) out += "\n" + detail::archive_line(*shared, h.seq, h.archived_at, h.msg, shared->max_runes_per_hit);
                         return out + dropped_note(r.first_seq);
                     })});
    tools.push_back({"history_get", shared->get_description,
                     memory::detail::schema({{"from", json{{"type", "integer"}, {"minimum", 0}}},
                                             {"count", json{{"type", "integer"}, {"minimum", 1}, {"maximum", 50}}}},
                                            {"from"}),
                     guard([&index, key, shared, dropped_note](const json& a) {
                         if (a.find("from") == a.end()) throw memory::detail::bad_arguments("from is required");
                         const std::int64_t from = detail::int_argument(a, "from", 0, 0, std::numeric_limits<std::int64_t>::max());
                         const auto count = static_cast<std::size_t>(detail::int_argument(a, "count", 10, 1, 50));
                         const archive_slice s = index.get(*key, from, count);
                         if (s.next_seq == 0 || s.first_seq == s.next_seq) return shared->empty + dropped_note(s.first_seq);
                         if (s.messages.empty())
                             return shared->none + " (#" + std::to_string(s.first_seq) + "-#" + std::to_string(s.next_seq - 1) + ")" +
                                    dropped_note(s.first_seq);
                         std::string out;
                         for (const archive_summary& sum : s.summaries)
                             if (!sum.summary.empty())
                                 out += memory::detail::fill(shared->summary, {{"from", std::to_string(sum.first_seq)},
                                                                               {"to", std::to_string(sum.first_seq + sum.count - 1)},
                                                                               {"text", std::string(text::truncate_runes(sum.summary, shared->max_runes_per_read))}}) +
                                        "\n";
                         for (std::size_t i = 0; i < s.messages.size(); ++i)
                             out += (i ? "\n" : "") + detail::archive_line(*shared, s.messages[i].seq, s.messages[i].archived_at, s.messages[i].msg,
                                                                      shared->max_runes_per_read);
                         return out + (from < s.first_seq ? dropped_note(s.first_seq) : std::string());
                     })});
    return tools;
}

} // namespace ania
