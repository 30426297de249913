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
#include <array>
#include <limits>
#include <optional>
#include <tuple>
#include <unordered_set>

#include <ania/error.hpp>

#include <ania/history/archive_search.hpp>
#include <ania/json.hpp>
#include <ania/memory/indexer.hpp>
#include <ania/memory/scope_index.hpp>
#include <ania/memory/similarity.hpp>
#include <ania/memory/tokenize.hpp>
#include <ania/memory/tools-inl.hpp>
#include <ania/text/utf8.hpp>

namespace ania {

/// One session's archive as searched: the archived messages and their index (entries parallel to rows; the
/// entries' content is dropped once indexed: the index keeps the lower-cased text it searches). The entries'
/// word pair filters are also kept by column (`columns[w][i]` = word w of entry i's filter): a term's test
/// then reads a few contiguous arrays instead of one scattered cache line per entry.
struct archive_index::session_index {
    using filter_words = std::array<std::vector<std::uint64_t>, std::tuple_size_v<decltype(memory::detail::pair_filter::bits)>>;

    std::mutex mutex;
    memory::detail::scope_index si;
    std::vector<archived_message> rows;
    filter_words columns;
    std::int64_t first_seq = 0, next_seq = 0;
    bool loaded = false;
    std::vector<std::uint32_t> scores, stamps;  // a search's scratch, reused
    std::uint32_t epoch = 0;

    void add(const memory::detail::indexer<memory::cjk_bigram_tokenizer>& ix, archived_message m) {
        memory::entry e;
        e.content = searchable_text(m.msg);
        memory::detail::indexed_entry x = ix.make(si.vocab, e);
        e.content = {};
        for (std::size_t w = 0; w < columns.size(); ++w) columns[w].push_back(x.content_pairs.bits[w]);
        si.push_back(std::move(e), std::move(x));
        rows.push_back(std::move(m));
    }
    void reset() {
        si = {};
        rows.clear();
        for (auto& c : columns) c.clear();
    }

    /// memory_search's keyword score of every entry (+10 per distinct query term its text contains), as the
    /// memory module computes it (memory::detail::keyword_scores, without tags and vectors), faster for one
    /// case that dominates here: a word term that is one of an entry's tokens is found by its postings, not
    /// by a substring search; the pair filter and the search run only for the entries left.
    void score(std::string_view query);
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
        x->reset();
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
    x->score(query);
    const std::vector<std::uint32_t>& scores = x->scores;
    // The best `limit` in one pass (a heap of them, worst on top): a common word matches most of the archive.
    const auto better = [&](std::uint32_t a, std::uint32_t b) { return scores[a] != scores[b] ? scores[a] > scores[b] : a > b; };
    std::vector<std::uint32_t> hit;
    hit.reserve(std::min<std::size_t>(limit, 64));
    for (std::uint32_t i = 0; i < scores.size(); ++i) {
        if (scores[i] == 0) continue;
        if (hit.size() < limit) {
            hit.push_back(i);
            std::push_heap(hit.begin(), hit.end(), better);
        } else if (better(i, hit.front())) {
            std::pop_heap(hit.begin(), hit.end(), better);
            hit.back() = i;
            std::push_heap(hit.begin(), hit.end(), better);
        }
    }
    std::sort_heap(hit.begin(), hit.end(), better);
    const std::size_t n = hit.size();
    out.hits.reserve(n);
    for (std::size_t k = 0; k < n; ++k) {
        const archived_message& m = x->rows[hit[k]];
        out.hits.push_back({m.seq, m.archived_at, m.msg, static_cast<double>(scores[hit[k]])});
    }
    return out;
}

ANIA_INLINE void archive_index::session_index::score(std::string_view query) {
    namespace md = memory::detail;
    si.ensure_postings(memory::dice_similarity{});
    const std::size_t n = rows.size();
    scores.assign(n, 0);
    stamps.resize(n, 0);
    const std::string low = memory::lower(query);
    std::vector<std::string_view> terms;  // distinct, first-seen order (a query is a few words: a scan)
    std::unordered_set<std::string_view> seen;
    detail::archive_tokenizer(low, [&](std::string_view t) {
        if (seen.insert(t).second) terms.push_back(t);
    });
    for (const std::string_view term : terms) {
        const std::optional<std::uint32_t> id = si.vocab.find(term);
        if (text::is_cjk(text::decode_rune(term, 0).value) && text::rune_count(term) <= 2 && md::all_cjk(term)) {
            if (!id) continue;  // the containment index is exact for CJK bigrams and runes
            for (const std::uint32_t pos : si.postings.of(*id)) scores[pos] += 10;
            for (const std::uint32_t pos : si.cjk_content.of(*id)) scores[pos] += 10;
            continue;
        }
        if (++epoch == 0) {  // wrapped: no stale stamp may equal a new epoch
            std::fill(stamps.begin(), stamps.end(), 0);
            epoch = 1;
        }
        if (id)
            for (const std::uint32_t pos : si.postings.of(*id)) {
                scores[pos] += 10;
                stamps[pos] = epoch;
            }
        const auto found = [&](std::size_t i) { return si.idx[i].lowered.find(term) != std::string::npos; };
        if (!md::pair_filter::is_word_run(term)) {  // not from this tokenizer; searched in every entry
            for (std::size_t i = 0; i < n; ++i)
                if (stamps[i] != epoch && found(i)) scores[i] += 10;
            continue;
        }
        md::pair_filter f;
        f.add(term);
        const auto need = f.sparse();
        for (std::size_t i = 0; i < n; ++i) {
            if (stamps[i] == epoch) continue;
            bool pass = true;
            for (const auto& [w, mask] : need) pass &= (columns[w][i] & mask) == mask;
            if (pass && found(i)) scores[i] += 10;
        }
    }
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
