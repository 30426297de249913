// ania/memory/manager.hpp -- long-term memory (SPEC §4): save with dedup, update, forget, search, per scope.
// SPDX-License-Identifier: MIT
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <exception>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <random>
#include <shared_mutex>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>
#include <vector>

#include <ania/detail/linkage.hpp>
#include <ania/detail/timestamp.hpp>
#include <ania/error.hpp>
#include <ania/log.hpp>
#include <ania/memory/concepts.hpp>
#include <ania/memory/entry.hpp>
#include <ania/memory/indexer.hpp>
#include <ania/memory/inject.hpp>
#include <ania/memory/keyword_search.hpp>
#include <ania/memory/near_duplicate.hpp>
#include <ania/memory/options.hpp>
#include <ania/memory/ram_backend.hpp>
#include <ania/memory/scope_index.hpp>
#include <ania/memory/similarity.hpp>
#include <ania/memory/tokenize.hpp>
#include <ania/memory/traits.hpp>
#include <ania/text/utf8.hpp>

namespace ania::memory {

/// Long-term memory for every scope, backed by `Traits::backend`, with an index per scope kept up to date on
/// save, update and forget (token ids, an inverted index, lower-cased text, pair filters, vector norms), so
/// neither the near-duplicate check nor keyword search re-tokenises the scope. Scopes are loaded on first use.
/// Every entry point answers "disabled" (or nothing) when the backend is not enabled (SPEC §4).
/// Thread-safe: each scope has its own lock (operations on different scopes run in parallel, and a huge query
/// in one scope blocks only that scope); the embedder is called outside any lock. The backend must outlive
/// the manager.
template <class Traits = default_memory_traits>
class basic_manager {
public:
    using traits_type = Traits;
    using backend_type = typename Traits::backend;
    using embedder_type = typename Traits::embedder;
    using tokenizer_type = typename Traits::tokenizer;
    using clock_type = typename Traits::clock;
    using similarity_type = typename Traits::similarity;
    using policies = memory_policies<Traits>;

    static_assert(memory_backend<backend_type>, "Traits::backend must model ania::memory::memory_backend (memory/concepts.hpp)");
    static_assert(memory::embedder<embedder_type>, "Traits::embedder must model ania::memory::embedder (memory/concepts.hpp)");
    static_assert(memory_tokenizer<tokenizer_type>, "Traits::tokenizer must model ania::memory::memory_tokenizer (memory/concepts.hpp)");
    static_assert(wall_clock<clock_type>, "Traits::clock must model ania::memory::wall_clock (memory/concepts.hpp)");
    static_assert(similarity_policy<similarity_type>, "Traits::similarity must model ania::memory::similarity_policy (memory/concepts.hpp)");

    explicit basic_manager(backend_type& backend, manager_options opt = {}, policies p = {})
        : backend_(backend), opt_(std::move(opt)), embedder_(std::move(p.embedder)), tokenizer_(std::move(p.tokenizer)),
          clock_(std::move(p.clock)), sim_(std::move(p.similarity)), indexer_(tokenizer_, opt_.exact_fold),
          near_(tokenizer_), rng_(opt_.seed ? opt_.seed : std::random_device{}()) {
        if (opt_.near_duplicate_threshold) sim_.threshold = *opt_.near_duplicate_threshold;
        if (!backend_.enabled())
            log_to(opt_.log, log_level::error, "memory: the backend is unavailable, long-term memory is disabled");
    }
    ~basic_manager();  // defined below the class, so that compiled mode's extern template covers it too
    basic_manager(const basic_manager&) = delete;
    basic_manager& operator=(const basic_manager&) = delete;

    /// False when the backend could not be set up: register no memory tools then (SPEC §4).
    [[nodiscard]] bool enabled() const { return backend_.enabled(); }
    [[nodiscard]] const manager_options& options() const noexcept { return opt_; }
    /// The near-duplicate policy. Weights are cached per scope: changing how the policy weighs tokens
    /// takes effect for a scope after its next change or reindex().
    [[nodiscard]] similarity_type& similarity() noexcept { return sim_; }

    /// The content as it would be stored: trimmed, then cut to max_content_runes (rune-safe), valid UTF-8.
    [[nodiscard]] std::string clean_content(std::string_view raw) const { return clean(raw, opt_.max_content_runes); }
    /// A user id as it would be stored: valid UTF-8, trimmed, cut to max_user_id_runes.
    [[nodiscard]] std::string clean_user_id(std::string_view raw) const { return clean(raw, opt_.max_user_id_runes); }
    /// Tags as they would be stored: each valid UTF-8, trimmed and cut to max_tag_runes; empty ones dropped;
    /// at most max_tags (the first ones).
    [[nodiscard]] std::vector<std::string> clean_tags(const std::vector<std::string>& raw) const {
        std::vector<std::string> out;
        for (const std::string& t : raw) {
            if (out.size() >= opt_.max_tags) break;
            std::string c = clean(t, opt_.max_tag_runes);
            if (!c.empty()) out.push_back(std::move(c));
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
        const std::uint64_t key = dedup_key(text, opt_.exact_fold);
        slot& sl = slot_of(s);
        std::lock_guard lock(sl.mutex);
        // With a versioned backend the checks below hold for the version they read: the insert is made only
        // if the scope is still at it, else the scope is reloaded and checked again (another process saved).
        for (int attempt = 1;; ++attempt) {
            detail::scope_index* si = nullptr;
            try {
                si = &index_of(sl, s);
            } catch (const std::exception& ex) {
                return failed<save_result, save_status>(ex, "save");
            }
            for (std::size_t i = 0; i < si->entries.size(); ++i)
                if (si->idx[i].dedup == key &&
                    normalize_for_dedup(si->entries[i].content, opt_.exact_fold) == normalize_for_dedup(text, opt_.exact_fold)) {
                    r.status = save_status::exact_duplicate;
                    r.saved = si->entries[i];
                    return r;
                }
            if (si->entries.size() >= opt_.max_entries) { r.status = save_status::full; return r; }
            near_duplicate_report near = near_.check(*si, sim_, text);
            entry e;
            e.id = fresh_id(*si);
            e.user_id = clean_user_id(user_id);
            e.content = text;
            e.tags = tags;  // copies: a retry needs them again
            e.embedding = vec;
            e.created_at = next_timestamp(*si);
            try {
                if constexpr (versioned_memory_backend<backend_type>) {
                    const std::optional<std::uint64_t> v = backend_.insert_if(s, e, si->version);
                    if (!v) {  // someone else wrote since the checks: check again on the scope as it is now
                        si->version = detail::scope_index::stale_version;
                        if (attempt < 16) continue;
                        throw error(errc::store_busy, "the scope kept changing under the save (16 attempts)");
                    }
                    si->version = *v;
                } else {
                    backend_.insert(s, e);
                }
            } catch (const std::exception& ex) {
                return failed<save_result, save_status>(ex, "save");
            }
            si->push_back(e, indexer_.make(si->vocab, e));
            indexer_.compact_if_stale(*si, sim_);
            r.saved = std::move(e);
            r.similar = std::move(near.similar);
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
        slot& sl = slot_of(s);
        std::lock_guard lock(sl.mutex);
        try {
            detail::scope_index& si = index_of(sl, s);
            const std::size_t i = si.find(id);
            if (i == detail::scope_index::npos) { r.status = update_status::not_found; return r; }
            entry e = si.entries[i];
            if (text && *text != e.content) {
                e.content = std::move(*text);
                e.embedding = std::move(vec);
            }
            if (user_id) e.user_id = clean_user_id(*user_id);
            if (tags) e.tags = clean_tags(*tags);
            write_backend(si, [&] { return backend_.update(s, e); });
            detail::indexed_entry x = indexer_.make(si.vocab, e);
            si.assign(i, e, std::move(x));
            indexer_.compact_if_stale(si, sim_);
            r.status = update_status::updated;
            r.updated = std::move(e);
            return r;
        } catch (const std::exception& ex) {
            return failed<update_result, update_status>(ex, "update");
        }
    }

    /// memory_forget: forgotten when the entry existed and is gone; a backend failure leaves the index as the
    /// backend is (status failed, with the reason).
    forget_result forget(const scope& s, std::string_view id) {
        forget_result r;
        if (!enabled()) { r.status = forget_status::disabled; return r; }
        slot& sl = slot_of(s);
        std::lock_guard lock(sl.mutex);
        try {
            detail::scope_index& si = index_of(sl, s);
            const std::size_t i = si.find(id);
            if (i == detail::scope_index::npos) { r.status = forget_status::not_found; return r; }
            write_backend(si, [&] { return backend_.erase(s, id); });
            si.erase(i);
            r.status = forget_status::forgotten;
            return r;
        } catch (const std::exception& ex) {
            return failed<forget_result, forget_status>(ex, "forget");
        }
    }

    /// memory_search (SPEC §4): without a query every entry, newest first; with one, every entry that scores
    /// > 0, highest first (stable: ties oldest first); see detail::keyword_scores for the score. At most
    /// `limit` hits (0: all). A query is cut to max_query_runes.
    std::vector<search_hit> search(const scope& s, std::string_view query, std::size_t limit = 0) {
        if (!enabled()) return {};
        if (limit == 0) limit = static_cast<std::size_t>(-1);
        const std::string q = clean(query, opt_.max_query_runes);
        std::vector<float> qvec = q.empty() ? std::vector<float>{} : embed(q);
        slot& sl = slot_of(s);
        std::lock_guard lock(sl.mutex);
        detail::scope_index& si = index_of(sl, s);
        std::vector<search_hit> hits;
        if (q.empty()) {
            for (std::size_t i = si.entries.size(); i-- > 0 && hits.size() < limit;) hits.push_back({i, 0.0, si.entries[i]});
            return hits;
        }
        si.ensure_postings(sim_);
        const std::vector<double> scores = detail::keyword_scores(si, tokenizer_, q, qvec);
        std::vector<std::size_t> order;
        for (std::size_t i = 0; i < scores.size(); ++i)
            if (scores[i] > 0) order.push_back(i);
        std::stable_sort(order.begin(), order.end(),
                         [&](std::size_t a, std::size_t b) { return scores[a] > scores[b]; });
        for (std::size_t k = 0; k < order.size() && k < limit; ++k) hits.push_back({order[k], scores[order[k]], si.entries[order[k]]});
        return hits;
    }

    /// Keyword (+ vector) scores of every entry of the scope for `query`, oldest first (what search sorts).
    std::vector<double> scores(const scope& s, std::string_view query) {
        if (!enabled()) return {};
        const std::string q = clean(query, opt_.max_query_runes);
        std::vector<float> qvec = embed(q);
        slot& sl = slot_of(s);
        std::lock_guard lock(sl.mutex);
        detail::scope_index& si = index_of(sl, s);
        si.ensure_postings(sim_);
        return detail::keyword_scores(si, tokenizer_, q, qvec);
    }

    /// The near-duplicate check alone (what save reports), for a text against the scope.
    near_duplicate_report near_duplicate(const scope& s, std::string_view content) {
        if (!enabled()) return {};
        std::string repaired;
        std::string_view text = content;
        if (!text::is_valid_utf8(text)) text = repaired = text::repair_utf8(content);  // copy only when needed
        text = text::trim(text::truncate_runes(text::trim(text), opt_.max_content_runes));
        slot& sl = slot_of(s);
        std::lock_guard lock(sl.mutex);
        return near_.check(index_of(sl, s), sim_, text);
    }

    /// The scope's entries, oldest first.
    std::vector<entry> list(const scope& s) {
        if (!enabled()) return {};
        slot& sl = slot_of(s);
        std::lock_guard lock(sl.mutex);
        return index_of(sl, s).entries;
    }
    std::optional<entry> get(const scope& s, std::string_view id) {
        if (!enabled()) return std::nullopt;
        slot& sl = slot_of(s);
        std::lock_guard lock(sl.mutex);
        const detail::scope_index& si = index_of(sl, s);
        const std::size_t i = si.find(id);
        if (i == detail::scope_index::npos) return std::nullopt;
        return si.entries[i];
    }
    /// Entries in the scope (loading and indexing it if needed).
    std::size_t size(const scope& s) {
        if (!enabled()) return 0;
        slot& sl = slot_of(s);
        std::lock_guard lock(sl.mutex);
        return index_of(sl, s).entries.size();
    }

    /// How big a scope's in-memory index is (loading it if needed).
    scope_stats stats(const scope& s) {
        if (!enabled()) return {};
        slot& sl = slot_of(s);
        std::lock_guard lock(sl.mutex);
        const detail::scope_index& si = index_of(sl, s);
        return {si.entries.size(), si.vocab.size()};
    }

    /// Scopes that hold memories (from the backend).
    std::vector<std::string> scopes() const { return enabled() ? backend_.scopes() : std::vector<std::string>{}; }

    /// The auto-inject block (see memory::inject_block in memory/inject.hpp).
    std::string inject_block(const scope& s, std::string_view user_text,
                             std::string_view header = default_inject_header) {
        return memory::inject_block(*this, s, user_text, header);
    }

    /// Embeds up to `max_entries` entries that have no vector yet (the embedder was absent or failing when
    /// they were saved). Call it periodically (see embedding_backfill). Returns how many got a vector.
    std::size_t backfill(std::size_t max_entries) {
        if (!enabled()) return 0;
        std::vector<std::pair<scope, entry>> todo;
        std::vector<std::pair<std::string, slot*>> loaded;
        {
            std::shared_lock lock(map_mutex_);
            for (auto& [name, sp] : scopes_) loaded.emplace_back(name, sp.get());
        }
        for (auto& [name, sp] : loaded) {
            std::lock_guard lock(sp->mutex);
            if (!sp->loaded) continue;
            for (const entry& e : sp->index.entries)
                if (e.embedding.empty() && todo.size() < max_entries) todo.emplace_back(scope::from(name), e);
        }
        std::size_t done = 0;
        for (auto& item : todo) {
            const scope& s = item.first;  // not a structured binding: clang 14 cannot capture those
            const entry& e = item.second;
            std::vector<float> vec = embed(e.content);
            if (vec.empty()) break;  // still unavailable: try again later
            slot& sl = slot_of(s);
            std::lock_guard lock(sl.mutex);
            try {
                detail::scope_index& si = index_of(sl, s);
                const std::size_t i = si.find(e.id);
                if (i == detail::scope_index::npos || si.entries[i].content != e.content) continue;  // changed meanwhile
                entry updated = si.entries[i];
                updated.embedding = std::move(vec);
                write_backend(si, [&] { return backend_.update(s, updated); });
                si.entries[i] = std::move(updated);
                si.idx[i].norm = detail::norm_of(si.entries[i].embedding);
                ++done;
            } catch (const std::exception& ex) {
                log_to(opt_.log, log_level::warn, std::string("memory: backfill could not store a vector: ") + ex.what());
            }
        }
        return done;
    }

    /// Drops the in-memory index of a scope (it is rebuilt from the backend on next use).
    void reload(const scope& s) {
        if (!enabled()) return;
        slot& sl = slot_of(s);
        std::lock_guard lock(sl.mutex);
        sl.loaded = false;
        sl.index = {};
    }

    /// Indexes a loaded scope again from the entries it holds (without reading the backend): a compact
    /// vocabulary and fresh postings. The manager does this by itself when updates and forgets have left
    /// the vocabulary mostly dead; loads the scope first if it is not loaded.
    void reindex(const scope& s) {
        if (!enabled()) return;
        slot& sl = slot_of(s);
        std::lock_guard lock(sl.mutex);
        if (!sl.loaded) index_of(sl, s);
        else indexer_.build(sl.index, sim_);
    }

private:
    [[nodiscard]] static std::string clean(std::string_view raw, std::size_t max_runes) {
        const std::string fixed = text::repair_utf8(raw);
        return std::string(text::trim(text::truncate_runes(text::trim(fixed), max_runes)));
    }

    template <class Result, class Status>
    Result failed(const std::exception& ex, const char* what) const {
        Result r;
        r.status = Status::failed;
        r.error = ex.what();
        log_to(opt_.log, log_level::error, std::string("memory: ") + what + " failed: " + ex.what());
        return r;
    }

    /// Runs one backend write for the scope. With a versioned backend the scope's index keeps the version
    /// the write produced when it is the next one (nobody else wrote in between), and is marked stale
    /// otherwise, so that it is reloaded before its next use.
    template <class Write>
    void write_backend(detail::scope_index& si, Write&& w) {
        if constexpr (versioned_memory_backend<backend_type>) {
            const std::uint64_t v = w();
            constexpr std::uint64_t stale = detail::scope_index::stale_version;
            si.version = si.version != stale && v == si.version + 1 ? v : stale;
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
        if constexpr (!std::is_same_v<embedder_type, no_embedder>)
            log_to(opt_.log, log_level::info, "memory: embedder unavailable, keywords only");
        return {};
    }

    /// One scope's index behind its own lock: operations on different scopes run in parallel. Slots are made
    /// once and never freed (reload() empties one), so a reference stays valid without the map's lock.
    struct slot {
        std::mutex mutex;
        detail::scope_index index;
        bool loaded = false;
    };

    slot& slot_of(const scope& s) {
        {
            std::shared_lock lock(map_mutex_);
            const auto it = scopes_.find(s.str());
            if (it != scopes_.end()) return *it->second;
        }
        std::unique_lock lock(map_mutex_);
        auto& p = scopes_[s.str()];
        if (!p) p = std::make_unique<slot>();
        return *p;
    }

    /// The scope's index (under sl.mutex), loaded and built on first use; with a versioned backend, loaded
    /// again when someone else changed the scope since (another process or manager on the same file). A
    /// failed load leaves the slot unloaded, nothing half-built.
    detail::scope_index& index_of(slot& sl, const scope& s) {
        if (sl.loaded) {
            if constexpr (versioned_memory_backend<backend_type>) {
                if (backend_.version(s) == sl.index.version) return sl.index;
            } else {
                return sl.index;
            }
        }
        detail::scope_index fresh;
        if constexpr (versioned_memory_backend<backend_type>)
            fresh.version = backend_.version(s);  // before the rows: a write in between means one more reload
        fresh.entries = backend_.load(s);
        indexer_.build(fresh, sim_);
        sl.index = std::move(fresh);
        sl.loaded = true;
        return sl.index;
    }

    std::string fresh_id(const detail::scope_index& si) {
        static constexpr char hex[] = "0123456789abcdef";
        for (int attempt = 0;; ++attempt) {
            std::string id(8, '0');
            const std::uint32_t v = [this] {
                std::lock_guard lock(rng_mutex_);
                return static_cast<std::uint32_t>(rng_());
            }();
            for (int k = 0; k < 8; ++k) id[static_cast<std::size_t>(k)] = hex[(v >> (28 - 4 * k)) & 0xF];
            if (si.find(id) == detail::scope_index::npos) return id;  // a collision is retried, never overwritten
            if (attempt > 1000) throw error(errc::store_error, "memory: no free id");
        }
    }

    /// Now, but strictly after the scope's newest entry, so that text order stays insertion order.
    std::string next_timestamp(const detail::scope_index& si) {
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

    backend_type& backend_;
    manager_options opt_;
    [[no_unique_address]] embedder_type embedder_;
    [[no_unique_address]] tokenizer_type tokenizer_;
    [[no_unique_address]] clock_type clock_;
    similarity_type sim_;
    detail::indexer<tokenizer_type> indexer_;            // refers to tokenizer_
    detail::near_duplicate_finder<tokenizer_type> near_;  // refers to tokenizer_
    std::mutex rng_mutex_;
    std::mt19937_64 rng_;
    std::shared_mutex map_mutex_;  // the map's shape only; each scope has its own lock
    std::map<std::string, std::unique_ptr<slot>, std::less<>> scopes_;
};

template <class Traits>
basic_manager<Traits>::~basic_manager() = default;

/// The spec's memory over the in-process backend (tests, bots without persistence).
using manager = basic_manager<default_memory_traits>;

#if !ANIA_HEADER_ONLY
extern template class basic_manager<default_memory_traits>;  // in the compiled library
#endif


} // namespace ania::memory
