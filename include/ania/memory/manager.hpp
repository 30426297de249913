// ania/memory/manager.hpp -- long-term memory (SPEC §4): save with dedup, update, forget, search, inject.
// SPDX-License-Identifier: MIT
#pragma once

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <exception>
#include <map>
#include <memory>
#include <mutex>
#include <shared_mutex>
#include <optional>
#include <random>
#include <span>
#include <string>
#include <string_view>
#include <tuple>
#include <unordered_set>
#include <utility>
#include <vector>

#include <ania/config.hpp>
#include <ania/detail/dot.hpp>
#include <ania/detail/timestamp.hpp>
#include <ania/log.hpp>
#include <ania/memory/entry.hpp>
#include <ania/memory/index.hpp>
#include <ania/memory/ram_backend.hpp>
#include <ania/memory/similarity.hpp>
#include <ania/memory/tokenize.hpp>
#include <ania/text/utf8.hpp>

namespace ania::memory {

struct manager_options {
    std::size_t max_entries = 200;        ///< memory.max_entries, per scope
    std::size_t max_content_runes = 2000; ///< one entry's content is cut to this many code points
    std::size_t inject_entries = 3;       ///< auto-inject: at most this many entries
    std::size_t inject_runes = 1500;      ///< auto-inject: about this many runes of block, and of query tail
    /// The similarity policy's threshold (memory.near_duplicate_threshold); empty: the policy's own
    /// (0.55 for the spec's Dice).
    std::optional<double> near_duplicate_threshold;
    /// What "the same content" means for exact duplicates (see exact_duplicate_fold).
    exact_duplicate_fold exact_fold = exact_duplicate_fold::white_space;
    // What a model may store besides the content, and what a query may cost: longer is cut, more is
    // dropped (the first ones kept), so a 10 MB tag or 100,000 tags cannot reach the store or every reply.
    std::size_t max_user_id_runes = 128;
    std::size_t max_tags = 16;
    std::size_t max_tag_runes = 64;
    std::size_t max_query_runes = 2000;  ///< memory_search: a longer query is cut to its first this many runes
    std::uint64_t seed = 0;               ///< id generator seed; 0 = from std::random_device
    log_sink log = stderr_log_sink();

    /// memory.* from the configuration.
    [[nodiscard]] static manager_options from(const config& c) {
        manager_options o;
        o.max_entries = static_cast<std::size_t>(c.memory.max_entries);
        o.max_content_runes = static_cast<std::size_t>(c.memory.max_content_runes);
        o.inject_entries = static_cast<std::size_t>(c.memory.inject_entries);
        o.inject_runes = static_cast<std::size_t>(c.memory.inject_runes);
        o.near_duplicate_threshold = c.memory.near_duplicate_threshold;
        o.exact_fold = c.memory.fold_case_and_width ? exact_duplicate_fold::width_and_case : exact_duplicate_fold::white_space;
        o.max_user_id_runes = static_cast<std::size_t>(c.memory.max_user_id_runes);
        o.max_tags = static_cast<std::size_t>(c.memory.max_tags);
        o.max_tag_runes = static_cast<std::size_t>(c.memory.max_tag_runes);
        return o;
    }
};

/// One entry and how alike it is to something.
struct similar_entry {
    std::size_t index;  ///< position in the scope, oldest first
    std::string id;
    double score;
};

/// The near-duplicate check of one text against a scope: the best match (ties: the oldest) and every entry
/// at or above the threshold, best first.
struct near_duplicate_report {
    std::optional<similar_entry> best;
    bool is_duplicate = false;
    std::vector<similar_entry> similar;
};

enum class save_status : std::uint8_t { saved, saved_near_duplicate, exact_duplicate, empty, full, failed, disabled };

struct save_result {
    save_status status = save_status::failed;
    entry saved;                          ///< the new entry, or the existing one for exact_duplicate
    std::vector<similar_entry> similar;   ///< for saved_near_duplicate
    std::string error;                    ///< for failed
};

enum class update_status : std::uint8_t { updated, not_found, empty, failed, disabled };
struct update_result {
    update_status status = update_status::failed;
    entry updated;
    std::string error;
};

/// The size of a scope's in-memory index: its entries, and the distinct tokens its vocabulary holds
/// (including tokens of since-changed entries, until the scope is indexed again).
struct scope_stats {
    std::size_t entries = 0;
    std::size_t vocabulary = 0;
};

struct search_hit {
    std::size_t index;  ///< position in the scope, oldest first
    double score;
    entry item;
};


/// Long-term memory for every scope, backed by `Backend`, with an index per scope kept up to date on save,
/// update and forget (token ids, an inverted index, lower-cased text, pair filters, vector norms), so neither
/// the near-duplicate check nor keyword search re-tokenises the scope. Scopes are loaded on first use.
/// Thread-safe: each scope has its own lock (operations on different scopes run in parallel, and a huge query
/// in one scope blocks only that scope); the embedder is called outside any lock. The backend must outlive
/// the manager.
template <memory_backend Backend = ram_backend, embedder Embedder = no_embedder,
          memory_tokenizer Tokenizer = cjk_bigram_tokenizer, wall_clock Clock = system_wall_clock,
          similarity_policy Similarity = dice_similarity>
class memory_manager {
public:
    using backend_type = Backend;

    explicit memory_manager(Backend& backend, manager_options opt = {}, Embedder emb = {}, Tokenizer tok = {}, Clock clock = {},
                            Similarity sim = {})
        : backend_(backend), opt_(std::move(opt)), embedder_(std::move(emb)), tokenizer_(std::move(tok)),
          clock_(std::move(clock)), sim_(std::move(sim)),
          rng_(opt_.seed ? opt_.seed : std::random_device{}()) {
        if (opt_.near_duplicate_threshold) sim_.threshold = *opt_.near_duplicate_threshold;
        if (!backend_.enabled())
            log_to(opt_.log, log_level::error, "memory: the backend is unavailable, long-term memory is disabled");
    }

    /// False when the backend could not be set up: register no memory tools then (SPEC §4).
    [[nodiscard]] bool enabled() const { return backend_.enabled(); }
    [[nodiscard]] const manager_options& options() const noexcept { return opt_; }
    /// The near-duplicate policy. Weights are cached per scope: changing how the policy weighs tokens
    /// takes effect for a scope after its next change or reindex().
    [[nodiscard]] Similarity& similarity() noexcept { return sim_; }

    /// The content as it would be stored: trimmed, then cut to max_content_runes (rune-safe), valid UTF-8.
    [[nodiscard]] std::string clean_content(std::string_view raw) const {
        const std::string fixed = text::repair_utf8(raw);
        return std::string(text::trim(text::truncate_runes(text::trim(fixed), opt_.max_content_runes)));
    }

    /// A user id as it would be stored: valid UTF-8, trimmed, cut to max_user_id_runes.
    [[nodiscard]] std::string clean_user_id(std::string_view raw) const {
        const std::string fixed = text::repair_utf8(raw);
        return std::string(text::trim(text::truncate_runes(text::trim(fixed), opt_.max_user_id_runes)));
    }
    /// Tags as they would be stored: each valid UTF-8, trimmed and cut to max_tag_runes; empty ones dropped;
    /// at most max_tags (the first ones).
    [[nodiscard]] std::vector<std::string> clean_tags(const std::vector<std::string>& raw) const {
        std::vector<std::string> out;
        for (const std::string& t : raw) {
            if (out.size() >= opt_.max_tags) break;
            const std::string fixed = text::repair_utf8(t);
            std::string clean(text::trim(text::truncate_runes(text::trim(fixed), opt_.max_tag_runes)));
            if (!clean.empty()) out.push_back(std::move(clean));
        }
        return out;
    }

    /// memory_save: see save_status. An exact duplicate (the same normal form: white space folded, and with
    /// exact_duplicate_fold::width_and_case also full-width forms and case) is not written; a near duplicate
    /// is written and reported; a full scope is refused; ids are 8 random hex digits, never reused in the scope.
    save_result save(const scope& s, std::string_view content, std::string_view user_id = {}, std::vector<std::string> tags = {}) {
        save_result r;
        if (!enabled()) { r.status = save_status::disabled; return r; }
        const std::string text = clean_content(content);
        if (text.empty()) { r.status = save_status::empty; return r; }
        tags = clean_tags(tags);
        std::vector<float> vec = embed(text);
        scope_slot& slot = slot_of(s);
        std::lock_guard lock(slot.mutex);
        // With a versioned backend the checks below hold for the version they read: the insert is made only
        // if the scope is still at it, else the scope is reloaded and checked again (another process saved).
        for (int attempt = 1;; ++attempt) {
            scope_index& si = index_of(slot, s);
            const std::uint64_t key = dedup_key(text, opt_.exact_fold);
            for (std::size_t i = 0; i < si.entries.size(); ++i)
                if (si.idx[i].dedup == key &&
                    normalize_for_dedup(si.entries[i].content, opt_.exact_fold) == normalize_for_dedup(text, opt_.exact_fold)) {
                    r.status = save_status::exact_duplicate;
                    r.saved = si.entries[i];
                    return r;
                }
            if (si.entries.size() >= opt_.max_entries) { r.status = save_status::full; return r; }
            const near_duplicate_report near = near_duplicate_locked(si, text);
            entry e;
            e.id = fresh_id(si);
            e.user_id = clean_user_id(user_id);
            e.content = text;
            e.tags = tags;  // copies: a retry needs them again
            e.embedding = vec;
            e.created_at = next_timestamp(si);
            try {
                if constexpr (versioned_memory_backend<Backend>) {
                    const std::optional<std::uint64_t> v = backend_.insert_if(s, e, si.version);
                    if (!v) {  // someone else wrote since the checks: check again on the scope as it is now
                        si.version = stale_version;
                        if (attempt < 16) continue;
                        throw error(errc::store_busy, "the scope kept changing under the save (16 attempts)");
                    }
                    si.version = *v;
                } else {
                    backend_.insert(s, e);
                }
            } catch (const std::exception& ex) {
                r.status = save_status::failed;
                r.error = ex.what();
                log_to(opt_.log, log_level::error, std::string("memory: save failed: ") + ex.what());
                return r;
            }
            add_locked(si, e);
            r.saved = std::move(e);
            r.similar = near.similar;
            r.status = near.is_duplicate ? save_status::saved_near_duplicate : save_status::saved;
            return r;
        }
    }

    /// memory_update: by id. Absent fields are kept; an empty user_id or tags list clears it; a content change
    /// recomputes the vector; created_at is kept.
    update_result update(const scope& s, std::string_view id, std::optional<std::string_view> content,
                         std::optional<std::string_view> user_id, std::optional<std::vector<std::string>> tags) {
        update_result r;
        if (!enabled()) { r.status = update_status::disabled; return r; }
        std::optional<std::string> text;
        std::vector<float> vec;
        if (content) {
            text = clean_content(*content);
            if (text->empty()) { r.status = update_status::empty; return r; }
            vec = embed(*text);
        }
        scope_slot& slot = slot_of(s);
        std::lock_guard lock(slot.mutex);
        scope_index& si = index_of(slot, s);
        const std::size_t i = find_locked(si, id);
        if (i == npos) { r.status = update_status::not_found; return r; }
        entry e = si.entries[i];
        if (text && *text != e.content) {
            e.content = std::move(*text);
            e.embedding = std::move(vec);
        }
        if (user_id) e.user_id = clean_user_id(*user_id);
        if (tags) e.tags = clean_tags(*tags);
        try {
            write_backend(si, [&] { return backend_.update(s, e); });
        } catch (const std::exception& ex) {
            r.status = update_status::failed;
            r.error = ex.what();
            return r;
        }
        si.entries[i] = e;
        si.idx[i] = make_index(si, e);
        rebuild_postings(si);
        compact_if_stale(si);
        r.status = update_status::updated;
        r.updated = std::move(e);
        return r;
    }

    /// memory_forget: true when the entry existed and is gone.
    bool forget(const scope& s, std::string_view id) {
        if (!enabled()) return false;
        scope_slot& slot = slot_of(s);
        std::lock_guard lock(slot.mutex);
        scope_index& si = index_of(slot, s);
        const std::size_t i = find_locked(si, id);
        if (i == npos) return false;
        write_backend(si, [&] { return backend_.erase(s, id); });  // throws on failure: the index is left as the backend is
        si.entries.erase(si.entries.begin() + static_cast<std::ptrdiff_t>(i));
        si.idx.erase(si.idx.begin() + static_cast<std::ptrdiff_t>(i));
        rebuild_postings(si);
        return true;
    }

    /// memory_search (SPEC §4): without a query every entry, newest first; with one, every entry that scores
    /// > 0, highest first (stable: ties oldest first). Score: +10 when the lower-cased content contains a term,
    /// +20 for every tag containing it, and when both vectors exist and their cosine is positive the
    /// original's semantic bonus floor(cosine x 40) — a bonus: a negative cosine never takes a keyword hit
    /// away, and a cosine below 1/40 alone does not make an entry relevant. At most `limit` hits (0: all).
    std::vector<search_hit> search(const scope& s, std::string_view query, std::size_t limit = 0) {
        if (!enabled()) return {};
        if (limit == 0) limit = static_cast<std::size_t>(-1);
        const std::string q = clean_query(query);
        std::vector<float> qvec = q.empty() ? std::vector<float>{} : embed(q);
        scope_slot& slot = slot_of(s);
        std::lock_guard lock(slot.mutex);
        scope_index& si = index_of(slot, s);
        std::vector<search_hit> hits;
        if (q.empty()) {
            for (std::size_t i = si.entries.size(); i-- > 0 && hits.size() < limit;) hits.push_back({i, 0.0, si.entries[i]});
            return hits;
        }
        std::vector<double> scores = score_locked(si, q, qvec);
        std::vector<std::size_t> order;
        for (std::size_t i = 0; i < scores.size(); ++i)
            if (scores[i] > 0) order.push_back(i);
        std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) { return scores[a] > scores[b]; });
        for (std::size_t k = 0; k < order.size() && k < limit; ++k) hits.push_back({order[k], scores[order[k]], si.entries[order[k]]});
        return hits;
    }

    /// Keyword (+ vector) scores of every entry of the scope for `query`, oldest first (what search sorts).
    std::vector<double> scores(const scope& s, std::string_view query) {
        const std::string q = clean_query(query);
        std::vector<float> qvec = embed(q);
        scope_slot& slot = slot_of(s);
        std::lock_guard lock(slot.mutex);
        return score_locked(index_of(slot, s), q, qvec);
    }

    /// The near-duplicate check alone (what save reports), for a text against the scope.
    near_duplicate_report near_duplicate(const scope& s, std::string_view content) {
        std::string repaired;
        std::string_view text = content;
        if (!text::is_valid_utf8(text)) text = repaired = text::repair_utf8(content);  // copy only when needed
        text = text::trim(text::truncate_runes(text::trim(text), opt_.max_content_runes));
        scope_slot& slot = slot_of(s);
        std::lock_guard lock(slot.mutex);
        return near_duplicate_locked(index_of(slot, s), text);
    }

    /// The scope's entries, oldest first.
    std::vector<entry> list(const scope& s) {
        if (!enabled()) return {};
        scope_slot& slot = slot_of(s);
        std::lock_guard lock(slot.mutex);
        return index_of(slot, s).entries;
    }
    std::optional<entry> get(const scope& s, std::string_view id) {
        if (!enabled()) return std::nullopt;
        scope_slot& slot = slot_of(s);
        std::lock_guard lock(slot.mutex);
        scope_index& si = index_of(slot, s);
        const std::size_t i = find_locked(si, id);
        if (i == npos) return std::nullopt;
        return si.entries[i];
    }
    /// Entries in the scope (loading and indexing it if needed).
    std::size_t size(const scope& s) {
        if (!enabled()) return 0;
        scope_slot& slot = slot_of(s);
        std::lock_guard lock(slot.mutex);
        return index_of(slot, s).entries.size();
    }

    /// How big a scope's in-memory index is (loading it if needed).
    scope_stats stats(const scope& s) {
        if (!enabled()) return {};
        scope_slot& slot = slot_of(s);
        std::lock_guard lock(slot.mutex);
        const scope_index& si = index_of(slot, s);
        return {si.entries.size(), si.vocab.size()};
    }

    /// Scopes that hold memories (from the backend).
    std::vector<std::string> scopes() const { return enabled() ? backend_.scopes() : std::vector<std::string>{}; }

    /// The auto-inject block for a user message (memory.auto_inject): the entries most relevant to the tail of
    /// the message, at most inject_entries of them and about inject_runes runes, under a header that says they
    /// are for reference and asks the model to correct wrong or outdated ones with memory_update. "" when
    /// nothing is relevant.
    std::string inject_block(const scope& s, std::string_view user_text, std::string_view header = default_inject_header) {
        const std::string fixed = text::repair_utf8(user_text);
        const std::size_t runes = text::rune_count(fixed);
        std::string_view tail = fixed;
        if (runes > opt_.inject_runes) {  // the newest part of a long message is the question
            const std::string_view head = text::truncate_runes(fixed, runes - opt_.inject_runes);
            tail.remove_prefix(head.size());
        }
        const auto hits = search(s, tail, opt_.inject_entries);
        if (hits.empty()) return {};
        std::string block(header);
        std::size_t budget = opt_.inject_runes > text::rune_count(block) ? opt_.inject_runes - text::rune_count(block) : 0;
        for (const auto& h : hits) {
            std::string line = "\n- [" + h.item.id + "] ";
            const std::size_t overhead = text::rune_count(line);
            if (budget <= overhead) break;
            line += text::truncate_runes(h.item.content, budget - overhead);
            budget -= std::min(budget, text::rune_count(line));
            block += line;
        }
        return block;
    }
    static constexpr std::string_view default_inject_header =
        "【相关记忆】以下记忆仅供参考；如发现与事实不符或已过时，请用 memory_update 更正：";
    static constexpr std::string_view english_inject_header =
        "[Relevant memories] For reference only; if one is wrong or outdated, correct it with memory_update:";

    /// Embeds up to `max_entries` entries that have no vector yet (the embedder was absent or failing when
    /// they were saved). Call it periodically (see embedding_backfill). Returns how many got a vector.
    std::size_t backfill(std::size_t max_entries) {
        if (!enabled()) return 0;
        std::vector<std::pair<scope, entry>> todo;
        std::vector<std::pair<std::string, scope_slot*>> loaded;
        {
            std::shared_lock lock(map_mutex_);
            for (auto& [name, slot] : scopes_) loaded.emplace_back(name, slot.get());
        }
        for (auto& [name, slot] : loaded) {
            std::lock_guard lock(slot->mutex);
            if (!slot->loaded) continue;
            for (const entry& e : slot->index.entries)
                if (e.embedding.empty() && todo.size() < max_entries) todo.emplace_back(scope::from(name), e);
        }
        std::size_t done = 0;
        for (auto& item : todo) {
            const scope& s = item.first;  // not a structured binding: clang 14 cannot capture those
            const entry& e = item.second;
            std::vector<float> vec = embed(e.content);
            if (vec.empty()) break;  // still unavailable: try again later
            scope_slot& slot = slot_of(s);
            std::lock_guard lock(slot.mutex);
            scope_index& si = index_of(slot, s);
            const std::size_t i = find_locked(si, e.id);
            if (i == npos || si.entries[i].content != e.content) continue;  // changed meanwhile
            entry updated = si.entries[i];
            updated.embedding = std::move(vec);
            try {
                write_backend(si, [&] { return backend_.update(s, updated); });
            } catch (const std::exception& ex) {
                log_to(opt_.log, log_level::warn, std::string("memory: backfill could not store a vector: ") + ex.what());
                continue;
            }
            si.entries[i] = std::move(updated);
            si.idx[i].norm = norm_of(si.entries[i].embedding);
            ++done;
        }
        return done;
    }

    /// Drops the in-memory index of a scope (it is rebuilt from the backend on next use).
    void reload(const scope& s) {
        scope_slot& slot = slot_of(s);
        std::lock_guard lock(slot.mutex);
        slot.loaded = false;
        slot.index = {};
    }

    /// Indexes a loaded scope again from the entries it holds (without reading the backend): a compact
    /// vocabulary and fresh postings. The manager does this by itself when updates and forgets have left
    /// the vocabulary mostly dead; loads the scope first if it is not loaded.
    void reindex(const scope& s) {
        if (!enabled()) return;
        scope_slot& slot = slot_of(s);
        std::lock_guard lock(slot.mutex);
        if (!slot.loaded) index_of(slot, s);
        else build_locked(slot.index);
    }

private:
    static constexpr std::size_t npos = static_cast<std::size_t>(-1);
    static constexpr std::uint64_t stale_version = static_cast<std::uint64_t>(-1);

    /// A query as it is scored: valid UTF-8, trimmed, cut to max_query_runes.
    [[nodiscard]] std::string clean_query(std::string_view raw) const {
        const std::string fixed = text::repair_utf8(raw);
        return std::string(text::trim(text::truncate_runes(text::trim(fixed), opt_.max_query_runes)));
    }

    struct scope_index {
        std::vector<entry> entries;              // oldest first
        std::vector<detail::indexed_entry> idx;  // parallel to entries
        detail::vocabulary vocab;                // the ids in idx and in the postings
        // Rebuilt from the cached token ids (never by re-tokenising) before the next query after a change.
        detail::postings_table postings;     // token id -> positions, ascending
        detail::postings_table cjk_content;  // CJK bigram/rune id -> positions containing it but not as a token
        detail::postings_table cjk_tags;     // ... -> one position per tag containing it
        std::vector<double> entry_weight;       // W(B) of each entry under the similarity policy
        std::vector<std::uint8_t> has_numbers;  // whether each entry has all-digit tokens
        bool postings_dirty = true;
        std::uint32_t built_vocabulary = 0;  // vocab.size() after the last full build
        std::string last_timestamp;
        std::uint64_t version = 0;  // the backend's version of the scope these entries are (versioned backends)
    };

    /// Buffers one operation reuses (so that a check allocates nothing), one set per thread: scopes are locked
    /// one by one, so two threads may index or check at once and each needs its own. Stamps dedup token ids
    /// without a set: a stamp per id, bumped once per text, sized by the largest vocabulary seen.
    struct scratch_space {
        std::vector<double> inter;
        std::vector<std::uint32_t> known, cand_numbers;  // near_duplicate_locked
        std::vector<std::pair<std::size_t, double>> similar;
        std::vector<std::uint64_t> unknown_cjk;
        std::string words;
        std::vector<std::pair<std::uint32_t, std::uint32_t>> unknown_words;
        std::vector<std::string_view> views;
        std::vector<std::uint32_t> counts;
        std::vector<std::uint32_t> tokens, contains, numbers, tag_contains;  // make_index
        detail::id_buffer run_tokens, run_contains;                         // index_default
        std::vector<std::uint32_t> stamp, contain_stamp;                    // see mark()
        std::uint32_t epoch = 1;

        void ensure_stamps(std::size_t ids) {
            if (stamp.size() < ids) stamp.resize(std::max(ids, stamp.size() * 2), 0);
            if (contain_stamp.size() < stamp.size()) contain_stamp.resize(stamp.size(), 0);
        }
        bool mark(std::uint32_t id) {
            if (stamp.size() <= id) stamp.resize(std::max<std::size_t>(id + 1, stamp.size() * 2), 0);
            if (stamp[id] == epoch) return false;
            stamp[id] = epoch;
            return true;
        }
        void next_epoch() {
            if (++epoch == 0) {
                std::fill(stamp.begin(), stamp.end(), 0);
                std::fill(contain_stamp.begin(), contain_stamp.end(), 0);
                epoch = 1;
            }
        }
    };
    [[nodiscard]] static scratch_space& scratch() {
        thread_local scratch_space space;
        return space;
    }

    /// Runs one backend write for the scope. With a versioned backend the scope's index keeps the version
    /// the write produced when it is the next one (nobody else wrote in between), and is marked stale
    /// otherwise, so that it is reloaded before its next use.
    template <class Write>
    void write_backend(scope_index& si, Write&& w) {
        if constexpr (versioned_memory_backend<Backend>) {
            const std::uint64_t v = w();
            si.version = si.version != stale_version && v == si.version + 1 ? v : stale_version;
        } else {
            w();
        }
    }

    std::vector<float> embed(const std::string& text) {
        try {
            auto v = embedder_.embed(text);
            if (v) return std::move(*v);
        } catch (const std::exception& e) {
            log_to(opt_.log, log_level::info, std::string("memory: embedder failed, keywords only: ") + e.what());
            return {};
        }
        if constexpr (!std::is_same_v<Embedder, no_embedder>)
            log_to(opt_.log, log_level::info, "memory: embedder unavailable, keywords only");
        return {};
    }

    static float norm_of(const std::vector<float>& v) noexcept { return std::sqrt(ania::detail::dot(v, v)); }

    /// What `e` contributes to the index of `si` (new tokens join si.vocab). Postings are left to
    /// ensure_postings.
    detail::indexed_entry make_index(scope_index& si, const entry& e) {
        scratch_space& sc = scratch();
        detail::vocabulary& vocab = si.vocab;
        detail::indexed_entry x;
        std::span<const std::uint32_t> tokens, contains;  // of the content
        std::vector<std::uint32_t>& numbers = sc.numbers;
        std::vector<std::uint32_t>& tag_contains = sc.tag_contains;
        numbers.clear();
        tag_contains.clear();
        // The golden semantics tokenise the whitespace-folded text; folding never changes tokens.
        if constexpr (std::is_same_v<Tokenizer, cjk_bigram_tokenizer>) {
            // one pass: lower-casing, dedup key, tokens, containment, pairs
            std::tie(tokens, contains) = index_default(vocab, e.content, x);
        } else {
            std::vector<std::uint32_t>& toks = sc.tokens;
            std::vector<std::uint32_t>& cont = sc.contains;
            toks.clear();
            cont.clear();
            x.lowered = lower(e.content);
            x.dedup = dedup_key(e.content, opt_.exact_fold);
            sc.ensure_stamps(vocab.size() + 2 * x.lowered.size() + 8);  // a guess; sc.mark() grows them if needed
            tokenizer_(x.lowered, [&](std::string_view t) {
                const std::uint32_t id = vocab.token(t);
                if (sc.mark(id)) {
                    toks.push_back(id);
                    if (detail::all_digits(t)) numbers.push_back(id);
                }
            });
            add_cjk_ids(vocab, x.lowered, cont);  // same epoch: the tokens among them are left out
            sc.next_epoch();
            x.content_pairs.add_word_runs(x.lowered);
            tokens = toks;
            contains = cont;
        }
        x.lowered_tags.reserve(e.tags.size());
        for (const auto& t : e.tags) {
            x.lowered_tags.push_back(lower(t));
            x.tag_pairs.add_word_runs(x.lowered_tags.back());
            sc.ensure_stamps(vocab.size() + 2 * t.size() + 8);
            add_cjk_ids(vocab, x.lowered_tags.back(), tag_contains);
            sc.next_epoch();
        }
        std::sort(numbers.begin(), numbers.end());
        x.ids.reserve(tokens.size() + contains.size() + tag_contains.size() + numbers.size());  // exact: one allocation
        x.ids.assign(tokens.begin(), tokens.end());
        x.ids.insert(x.ids.end(), contains.begin(), contains.end());
        x.ids.insert(x.ids.end(), tag_contains.begin(), tag_contains.end());
        x.ids.insert(x.ids.end(), numbers.begin(), numbers.end());
        x.token_end = static_cast<std::uint32_t>(tokens.size());
        x.contains_end = static_cast<std::uint32_t>(tokens.size() + contains.size());
        x.tag_contains_end = static_cast<std::uint32_t>(x.contains_end + tag_contains.size());
        x.norm = norm_of(e.embedding);
        return x;
    }

    /// How indexing sees one rune (see peek_rune).
    enum class rune_kind : std::uint8_t { other, word, cjk, invalid };
    struct read_result {
        char32_t c;         // lower-cased (for an invalid sequence: U+FFFD)
        char32_t original;  // as written
        std::uint8_t length;
        rune_kind kind;
    };

    /// The rune at `pos` of `in`, lower-cased and classified for the tokenizer; ASCII and U+3000..U+9FFF
    /// (CJK) without the general decoder. Inlined: indexing and the near-duplicate check call it per rune.
    [[gnu::always_inline]] static read_result peek_rune(std::string_view in, std::size_t pos) noexcept {
        const auto b = static_cast<unsigned char>(in[pos]);
        if (b < 0x80) {
            const auto c = static_cast<char32_t>(b >= 'A' && b <= 'Z' ? b + 32 : b);
            const bool word = (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9');
            return {c, b, 1, word ? rune_kind::word : rune_kind::other};
        }
        if (b >= 0xE3 && b <= 0xE9 && pos + 2 < in.size() && (static_cast<unsigned char>(in[pos + 1]) & 0xC0) == 0x80 &&
            (static_cast<unsigned char>(in[pos + 2]) & 0xC0) == 0x80) {  // lower-casing is the identity here
            const char32_t c = (char32_t{b & 0x0Fu} << 12) | (char32_t{static_cast<unsigned char>(in[pos + 1]) & 0x3Fu} << 6) |
                               (static_cast<unsigned char>(in[pos + 2]) & 0x3Fu);
            const bool cjk = c >= 0x4E00 || (c >= 0x3400 && c <= 0x4DBF) || (c >= 0x3040 && c <= 0x30FF);  // is_cjk here
            return {c, c, 3, cjk ? rune_kind::cjk : is_word_rune(c) ? rune_kind::word : rune_kind::other};
        }
        const auto r = text::decode_rune(in, pos);
        if (!r.valid) return {r.value, r.value, r.length, rune_kind::invalid};
        const char32_t c = to_lower(r.value);
        return {c, r.value, r.length, is_cjk(c) ? rune_kind::cjk : is_word_rune(c) ? rune_kind::word : rune_kind::other};
    }

    /// peek_rune, and also: the rune written lower-cased to out[pos..] (same length: see lower) and fed to the
    /// dedup stream as written (it folds case itself when asked to). Its own fast paths: indexing
    /// spends most of its time here.
    template <class Dedup>
    [[gnu::always_inline]] static read_result read_rune(std::string_view in, std::size_t pos, char* out, Dedup& dedup) noexcept {
        const auto b = static_cast<unsigned char>(in[pos]);
        if (b < 0x80) {  // ASCII: dedup_fold is lower-casing, white space is one of six bytes
            const auto c = static_cast<unsigned char>(b >= 'A' && b <= 'Z' ? b + 32 : b);
            out[pos] = static_cast<char>(c);
            if (b == ' ' || (b >= '\t' && b <= '\r')) dedup.space();
            else dedup.folded(dedup.fold ? c : b);
            const bool word = (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9');
            return {c, b, 1, word ? rune_kind::word : rune_kind::other};
        }
        const read_result r = peek_rune(in, pos);
        if (r.kind == rune_kind::invalid) {
            dedup.invalid(in.substr(pos, r.length));
        } else {
            if (r.c != r.original) text::encode_utf8(r.c, out + pos);
            if (r.c > 0x3000 && r.c < 0xA000) dedup.folded(r.c);  // dedup_fold is the identity, none is a space
            else dedup.valid(r.original);
        }
        return r;
    }

    /// The reference tokenizer (see for_each_token_lowered) fused with everything else an entry's index needs,
    /// in one pass over the runes of `content`: the lower-cased copy (written in place), the dedup key,
    /// numbers (into sc.numbers) and the word-run pair filter go into `x`; the token ids and the CJK
    /// containment ids, each once, are returned (they live in scratch buffers until the next call).
    std::pair<std::span<const std::uint32_t>, std::span<const std::uint32_t>> index_default(detail::vocabulary& vocab,
                                                                                          std::string_view content,
                                                                                          detail::indexed_entry& x) {
        scratch_space& sc = scratch();
        const std::size_t n = content.size();
        x.lowered.assign(content);
        char* const out = x.lowered.data();
        const char* const low = x.lowered.data();
        dedup_stream dedup{dedup_hash{}, opt_.exact_fold == exact_duplicate_fold::width_and_case};
        // Every rune adds at most two tokens and one containment id, and at most three new ids to the
        // dictionary: sized once here, the loop writes and dedups without branches (whether an id was seen
        // is unpredictable, and a mispredicted branch per rune cost more than the rest of the work).
        std::uint32_t* const tok = sc.run_tokens.reserve(2 * n + 8);
        std::uint32_t* const con = sc.run_contains.reserve(2 * n + 8);
        sc.ensure_stamps(vocab.size() + 3 * n + 8);
        // Tokens are deduplicated by `seen`, runes as containment ids by `rune_seen`.
        std::uint32_t* const seen = sc.stamp.data();
        std::uint32_t* const rune_seen = sc.contain_stamp.data();
        const std::uint32_t epoch = sc.epoch;
        std::size_t nt = 0, nc = 0;
        const auto token = [&](std::uint32_t id) {
            tok[nt] = id;
            nt += seen[id] != epoch;
            seen[id] = epoch;
        };

        constexpr std::size_t none = std::string_view::npos;
        std::size_t word = none;  // start of the word run being read
        const auto end_word = [&](std::size_t end) {
            if (word == none) return;
            const std::string_view w(low + word, end - word);
            const std::uint32_t id = vocab.word(w);
            if (seen[id] != epoch && detail::all_digits(w)) sc.numbers.push_back(id);
            token(id);
            x.content_pairs.add(w);
            word = none;
        };

        std::size_t pos = 0;
        read_result r{};
        bool have = false;  // r is the rune at pos, read already
        while (pos < n) {
            if (!have) r = read_rune(content, pos, out, dedup);
            have = false;
            if (r.kind == rune_kind::word) {
                if (word == none) word = pos;
                pos += r.length;
                continue;
            }
            end_word(pos);
            if (r.kind != rune_kind::cjk) {
                pos += r.length;
                continue;
            }
            // A CJK run: every bigram is a token, the runes of a run of one to three are tokens too, and
            // the other runes are containment ids.
            std::uint32_t singles[3];
            std::size_t run = 0;
            char32_t prev_cp = 0;
            for (;;) {
                const std::uint32_t one = vocab.rune(r.c);
                con[nc] = one;
                nc += rune_seen[one] != epoch;
                rune_seen[one] = epoch;
                if (run > 0) token(vocab.bigram(prev_cp, r.c));
                if (run < 3) singles[run] = one;
                ++run;
                prev_cp = r.c;
                pos += r.length;
                if (pos >= n) break;
                r = read_rune(content, pos, out, dedup);
                if (r.kind != rune_kind::cjk) {
                    have = true;
                    break;
                }
            }
            if (run <= 3)
                for (std::size_t i = 0; i < run; ++i) token(singles[i]);
        }
        end_word(n);
        // Containment ids that are tokens too (the runes of short runs) are answered by the postings.
        std::size_t kept = 0;
        for (std::size_t i = 0; i < nc; ++i) {
            con[kept] = con[i];
            kept += seen[con[i]] != epoch;
        }
        nc = kept;
        sc.next_epoch();
        x.dedup = dedup.put.value;
        return {std::span<const std::uint32_t>(tok, nt), std::span<const std::uint32_t>(con, nc)};
    }

    /// Appends (once each, within the current epoch) the ids of every CJK bigram and rune of `low`.
    void add_cjk_ids(detail::vocabulary& vocab, std::string_view low, std::vector<std::uint32_t>& out) {
        scratch_space& sc = scratch();
        char32_t prev = 0;  // the previous rune when it is CJK, else 0
        for (std::size_t pos = 0; pos < low.size();) {
            const auto r = text::decode_rune(low, pos);
            if (r.valid && is_cjk(r.value)) {
                const std::uint32_t one = vocab.rune(r.value);
                if (sc.mark(one)) out.push_back(one);
                if (prev != 0) {
                    const std::uint32_t two = vocab.bigram(prev, r.value);
                    if (sc.mark(two)) out.push_back(two);
                }
                prev = r.value;
            } else {
                prev = 0;
            }
            pos += r.length;
        }
    }

    void add_locked(scope_index& si, const entry& e) {
        si.idx.push_back(make_index(si, e));
        si.entries.push_back(e);
        si.postings_dirty = true;
        if (e.created_at > si.last_timestamp) si.last_timestamp = e.created_at;
        compact_if_stale(si);
    }

    void rebuild_postings(scope_index& si) { si.postings_dirty = true; }

    void ensure_postings(scope_index& si) {
        if (!si.postings_dirty) return;
        using x = detail::indexed_entry;
        si.postings.build(si.vocab.size(), si.idx, &x::tokens);
        si.cjk_content.build(si.vocab.size(), si.idx, &x::cjk_contains);
        si.cjk_tags.build(si.vocab.size(), si.idx, &x::cjk_tag_contains);
        const std::size_t n = si.idx.size();
        si.entry_weight.resize(n);
        si.has_numbers.resize(n);
        for (std::size_t i = 0; i < n; ++i) {
            const detail::indexed_entry& e = si.idx[i];
            if constexpr (Similarity::weighted) {  // depends on every entry's tokens: recomputed on each change
                double w = 0;
                for (const std::uint32_t t : e.tokens()) w += sim_.weight(si.postings.of(t).size(), n);
                si.entry_weight[i] = w;
            } else {
                si.entry_weight[i] = static_cast<double>(e.token_end);
            }
            si.has_numbers[i] = !e.numbers().empty();
        }
        si.postings_dirty = false;
    }

    /// One scope's index behind its own lock: operations on different scopes run in parallel. Slots are made
    /// once and never freed (reload() empties one), so a reference stays valid without the map's lock.
    struct scope_slot {
        std::mutex mutex;
        scope_index index;
        bool loaded = false;
    };

    scope_slot& slot_of(const scope& s) {
        {
            std::shared_lock lock(map_mutex_);
            const auto it = scopes_.find(s.str());
            if (it != scopes_.end()) return *it->second;
        }
        std::unique_lock lock(map_mutex_);
        auto& p = scopes_[s.str()];
        if (!p) p = std::make_unique<scope_slot>();
        return *p;
    }

    /// The scope's index (under slot.mutex), loaded and built on first use; with a versioned backend, loaded
    /// again when someone else changed the scope since (another process or manager on the same file). A
    /// failed load leaves the slot unloaded, nothing half-built.
    scope_index& index_of(scope_slot& slot, const scope& s) {
        if (slot.loaded) {
            if constexpr (versioned_memory_backend<Backend>) {
                if (backend_.version(s) == slot.index.version) return slot.index;
            } else {
                return slot.index;
            }
        }
        scope_index fresh;
        if constexpr (versioned_memory_backend<Backend>) fresh.version = backend_.version(s);  // before the rows: a write in between means one more reload
        fresh.entries = backend_.load(s);
        build_locked(fresh);
        slot.index = std::move(fresh);
        slot.loaded = true;
        return slot.index;
    }

    /// Indexes si.entries from scratch: a fresh vocabulary, every entry, the postings.
    void build_locked(scope_index& si) {
        si.vocab = {};
        si.idx.clear();
        si.idx.reserve(si.entries.size());
        std::size_t bytes = 0;
        for (const entry& e : si.entries) bytes += e.content.size();
        si.vocab.reserve(bytes);
        for (const entry& e : si.entries) {
            si.idx.push_back(make_index(si, e));
            if (e.created_at > si.last_timestamp) si.last_timestamp = e.created_at;
        }
        si.built_vocabulary = si.vocab.size();
        si.postings_dirty = true;
        ensure_postings(si);
    }

    /// Updates and forgets leave the ids of tokens no entry uses any more in the vocabulary (and in the
    /// postings' offsets); once those could be most of it, the scope is indexed again from its entries.
    void compact_if_stale(scope_index& si) {
        if (si.vocab.size() > 2 * si.built_vocabulary + 4096) build_locked(si);
    }

    static std::size_t find_locked(const scope_index& si, std::string_view id) {
        for (std::size_t i = 0; i < si.entries.size(); ++i)
            if (si.entries[i].id == id) return i;
        return npos;
    }

    std::string fresh_id(const scope_index& si) {
        static constexpr char hex[] = "0123456789abcdef";
        for (int attempt = 0;; ++attempt) {
            std::string id(8, '0');
            const std::uint32_t v = [this] {
                std::lock_guard lock(rng_mutex_);
                return static_cast<std::uint32_t>(rng_());
            }();
            for (int k = 0; k < 8; ++k) id[static_cast<std::size_t>(k)] = hex[(v >> (28 - 4 * k)) & 0xF];
            if (find_locked(si, id) == npos) return id;  // a collision is retried, never overwritten
            if (attempt > 1000) throw error(errc::store_error, "memory: no free id");
        }
    }

    /// Now, but strictly after the scope's newest entry, so that text order stays insertion order.
    std::string next_timestamp(const scope_index& si) {
        auto t = clock_.now();
        std::string ts = ania::detail::utc_timestamp(t);
        while (ts <= si.last_timestamp) {
            t += std::chrono::nanoseconds(1);
            ts = ania::detail::utc_timestamp(t);
            if (ts <= si.last_timestamp && ts.size() == si.last_timestamp.size()) {
                // far behind (clock moved back): continue from the newest entry
                ts = si.last_timestamp;
                std::size_t k = ts.size() - 2;  // last digit before 'Z'
                while (ts[k] == '9') ts[k--] = '0';
                ++ts[k];
            }
        }
        return ts;
    }

    /// The reference tokenizer's tokens of a candidate text, looked up in `vocab` as they are read (CJK by code
    /// points; words lower-cased into a scratch buffer): known ids, each once, into sc.known (all-digit
    /// ones also into sc.cand_numbers); the distinct unknown tokens are counted.
    void candidate_default_tokens(const detail::vocabulary& vocab, std::string_view content, std::size_t& unknown,
                                  bool& unknown_number) {
        scratch_space& sc = scratch();
        sc.ensure_stamps(vocab.size());
        std::vector<std::uint64_t>& unknown_cjk = sc.unknown_cjk;  // rune: 1 << 63 | cp; bigram: a << 21 | b
        std::string& words = sc.words;                            // lowered words, unknown ones kept
        std::vector<std::pair<std::uint32_t, std::uint32_t>>& unknown_words = sc.unknown_words;
        unknown_cjk.clear();
        words.clear();
        unknown_words.clear();
        const auto found = [&](std::optional<std::uint32_t> id) {
            if (id && sc.mark(*id)) sc.known.push_back(*id);
            return id.has_value();
        };
        std::size_t word = std::string::npos;  // start of the current word in `words`
        const auto end_word = [&] {
            if (word == std::string::npos) return;
            const std::string_view w = std::string_view(words).substr(word);
            const auto id = vocab.find_word(w);
            if (id) {
                if (sc.mark(*id)) {
                    sc.known.push_back(*id);
                    if (detail::all_digits(w)) sc.cand_numbers.push_back(*id);
                }
                words.resize(word);
            } else {
                unknown_words.emplace_back(static_cast<std::uint32_t>(word), static_cast<std::uint32_t>(w.size()));
                unknown_number = unknown_number || detail::all_digits(w);
            }
            word = std::string::npos;
        };
        char32_t run[3];  // the first runes of the current CJK run
        std::size_t run_length = 0;
        const auto end_run = [&] {
            if (run_length >= 1 && run_length <= 3)
                for (std::size_t i = 0; i < run_length; ++i)
                    if (!found(vocab.find_rune(run[i]))) unknown_cjk.push_back(std::uint64_t{1} << 63 | run[i]);
            run_length = 0;
        };
        char32_t prev = 0;
        for (std::size_t pos = 0; pos < content.size();) {
            const read_result r = peek_rune(content, pos);
            if (r.kind == rune_kind::cjk) {
                end_word();
                if (run_length > 0 && !found(vocab.find_bigram(prev, r.c))) unknown_cjk.push_back(std::uint64_t{prev} << 21 | r.c);
                if (run_length < 3) run[run_length] = r.c;
                ++run_length;
                prev = r.c;
            } else if (r.kind == rune_kind::word) {
                end_run();
                if (word == std::string::npos) word = words.size();
                if (r.length == 1) words.push_back(static_cast<char>(r.c));
                else text::append_utf8(words, r.c);
            } else {
                end_run();
                end_word();
            }
            pos += r.length;
        }
        end_run();
        end_word();
        sc.next_epoch();
        std::sort(unknown_cjk.begin(), unknown_cjk.end());
        unknown = static_cast<std::size_t>(std::unique(unknown_cjk.begin(), unknown_cjk.end()) - unknown_cjk.begin());
        std::vector<std::string_view>& views = sc.views;
        views.clear();
        for (const auto& [at, length] : unknown_words) views.emplace_back(std::string_view(words).substr(at, length));
        std::sort(views.begin(), views.end());
        unknown += static_cast<std::size_t>(std::unique(views.begin(), views.end()) - views.begin());
    }

    near_duplicate_report near_duplicate_locked(scope_index& si, std::string_view content) {
        scratch_space& sc = scratch();
        ensure_postings(si);
        near_duplicate_report rep;
        const std::size_t n = si.entries.size();
        if (n == 0) return rep;
        // Folding white space never changes tokens (white space only separates), so it is skipped here.
        // Candidate tokens: known ids (deduplicated by stamp) and unknown ones (counted only).
        std::vector<std::uint32_t>& known = sc.known;
        std::vector<std::uint32_t>& cand_numbers = sc.cand_numbers;
        known.clear();
        cand_numbers.clear();
        std::size_t unknown = 0;
        bool cand_unknown_number = false;  // a number no stored entry has ever contained
        if constexpr (std::is_same_v<Tokenizer, cjk_bigram_tokenizer>) {
            candidate_default_tokens(si.vocab, content, unknown, cand_unknown_number);
        } else {
            const std::string low = lower(content);
            std::vector<std::string_view> unknown_tokens;
            sc.ensure_stamps(si.vocab.size());
            tokenizer_(low, [&](std::string_view t) {
                if (const auto id = si.vocab.find(t)) {
                    if (sc.mark(*id)) {
                        known.push_back(*id);
                        if (detail::all_digits(t)) cand_numbers.push_back(*id);
                    }
                } else {
                    unknown_tokens.push_back(t);
                }
            });
            sc.next_epoch();
            std::sort(unknown_tokens.begin(), unknown_tokens.end());
            unknown_tokens.erase(std::unique(unknown_tokens.begin(), unknown_tokens.end()), unknown_tokens.end());
            unknown = unknown_tokens.size();
            cand_unknown_number = std::any_of(unknown_tokens.begin(), unknown_tokens.end(), detail::all_digits);
        }
        std::sort(cand_numbers.begin(), cand_numbers.end());
        const bool cand_has_numbers = cand_unknown_number || !cand_numbers.empty();

        std::vector<double>& inter = sc.inter;  // reused: no allocation per check
        std::vector<std::uint32_t>& counts = sc.counts;
        double wa = 0;
        const auto df = [&](std::uint32_t t) { return si.postings.of(t).size(); };
        if constexpr (Similarity::weighted) {
            inter.assign(n, 0.0);
            for (const std::uint32_t t : known) {
                const double w = sim_.weight(df(t), n);
                wa += w;
                for (const std::uint32_t pos : si.postings.of(t)) inter[pos] += w;
            }
        } else {  // unit weights: count in integers
            counts.assign(n, 0);
            for (const std::uint32_t t : known)
                for (const std::uint32_t pos : si.postings.of(t)) ++counts[pos];
            wa = static_cast<double>(known.size());
        }
        wa += static_cast<double>(unknown) * sim_.weight(0, n);
        // Per entry only compact arrays are read (W(B) and whether it holds numbers), not the entries' index.
        const double* const wb = si.entry_weight.data();
        const std::uint8_t* const has_numbers = si.has_numbers.data();
        std::size_t best = 0;
        double best_score = -1;
        std::vector<std::pair<std::size_t, double>>& similar = sc.similar;
        similar.clear();
        for (std::size_t i = 0; i < n; ++i) {
            const bool numbers_differ = cand_has_numbers && has_numbers[i] &&
                                        (cand_unknown_number || !std::ranges::equal(si.idx[i].numbers(), cand_numbers));
            double in;
            if constexpr (Similarity::weighted) in = inter[i];
            else in = static_cast<double>(counts[i]);
            const double score = sim_.score(in, wa, wb[i], numbers_differ);
            if (score > best_score) {  // ties: the oldest
                best = i;
                best_score = score;
            }
            if (score >= sim_.threshold) similar.emplace_back(i, score);
        }
        rep.best = similar_entry{best, si.entries[best].id, best_score};
        std::stable_sort(similar.begin(), similar.end(), [](const auto& a, const auto& b) { return a.second > b.second; });
        for (std::size_t k = 0; k < similar.size() && k < 3; ++k)
            rep.similar.push_back({similar[k].first, si.entries[similar[k].first].id, similar[k].second});
        rep.is_duplicate = best_score >= sim_.threshold;
        return rep;
    }

    std::vector<double> score_locked(scope_index& si, std::string_view query, const std::vector<float>& qvec) {
        ensure_postings(si);
        const std::string low = lower(query);
        // Distinct terms in first-seen order. A short query (the usual: a few words) is deduplicated by a scan;
        // past 32 terms by a hash set, so that 10^5 distinct words never cost 10^10 comparisons.
        constexpr std::size_t scan_max = 32;
        std::vector<std::string_view> terms;
        std::unordered_set<std::string_view> seen_terms;
        tokenizer_(low, [&](std::string_view t) {
            if (terms.size() < scan_max) {
                if (std::find(terms.begin(), terms.end(), t) != terms.end()) return;
                terms.push_back(t);
                if (terms.size() == scan_max) seen_terms.insert(terms.begin(), terms.end());
            } else if (seen_terms.insert(t).second) {
                terms.push_back(t);
            }
        });
        const std::size_t n = si.entries.size();
        std::vector<double> out(n, 0.0);
        for (const std::string_view term : terms) {
            if (is_cjk(text::decode_rune(term, 0).value) && text::rune_count(term) <= 2 && all_cjk(term)) {
                // CJK bigrams and runes: the containment index is exact (see indexed_entry).
                const auto id = si.vocab.find(term);
                if (!id) continue;  // no entry's text has it
                for (const std::uint32_t pos : si.postings.of(*id)) out[pos] += 10;  // disjoint from the next
                for (const std::uint32_t pos : si.cjk_content.of(*id)) out[pos] += 10;
                for (const std::uint32_t pos : si.cjk_tags.of(*id)) out[pos] += 20;
                continue;
            }
            // Word terms may sit inside longer words ("file" in "profile"): a pair filter, then a real search.
            // Other terms (a custom tokenizer's) are searched for in every entry.
            detail::pair_filter f;
            if (detail::pair_filter::is_word_run(term)) f.add(term);
            const auto bits = f.sparse();  // empty: every entry passes
            for (std::size_t i = 0; i < n; ++i) {
                const detail::indexed_entry& x = si.idx[i];
                if (x.content_pairs.has(bits) && x.lowered.find(term) != std::string::npos) out[i] += 10;
                if (!x.lowered_tags.empty() && x.tag_pairs.has(bits))
                    for (const std::string& tag : x.lowered_tags)
                        if (tag.find(term) != std::string::npos) out[i] += 20;
            }
        }
        if (!qvec.empty()) {
            const float qnorm = norm_of(qvec);
            for (std::size_t i = 0; i < n; ++i) {
                const auto& v = si.entries[i].embedding;
                if (qnorm > 0 && si.idx[i].norm > 0 && v.size() == qvec.size()) {
                    const double cosine = ania::detail::dot(qvec, v) / (qnorm * si.idx[i].norm);
                    // The original's int(sim*40) when sim > 0: nothing below 1 (a negative cosine included), else
                    // the truncation, which is the floor of a positive number (std::floor is a libm call here).
                    if (const double bonus = cosine * 40.0; bonus >= 1.0) out[i] += static_cast<double>(static_cast<int>(bonus));
                }
            }
        }
        return out;
    }

    static bool all_cjk(std::string_view t) noexcept {
        for (std::size_t pos = 0; pos < t.size();) {
            const auto r = text::decode_rune(t, pos);
            if (!r.valid || !is_cjk(r.value)) return false;
            pos += r.length;
        }
        return true;
    }

    Backend& backend_;
    manager_options opt_;
    Embedder embedder_;
    Tokenizer tokenizer_;
    Clock clock_;
    Similarity sim_;
    std::mutex rng_mutex_;
    std::mt19937_64 rng_;
    std::shared_mutex map_mutex_;  // the map's shape only; each scope has its own lock
    std::map<std::string, std::unique_ptr<scope_slot>, std::less<>> scopes_;
};

} // namespace ania::memory
