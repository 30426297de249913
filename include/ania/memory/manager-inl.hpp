// ania/memory/manager-inl.hpp -- the member definitions of basic_manager (<ania/memory/manager.hpp>) and the
// engines they use. Header-only mode includes this from there. In compiled mode the library instantiates the
// shipped traits; a manager over traits of your own needs this header included before it is used.
// SPDX-License-Identifier: MIT
#pragma once

#include <algorithm>
#include <cstdint>
#include <exception>
#include <memory>
#include <mutex>
#include <optional>
#include <random>
#include <shared_mutex>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include <ania/memory/indexer.hpp>
#include <ania/memory/keyword_search.hpp>
#include <ania/memory/manager.hpp>
#include <ania/memory/near_duplicate.hpp>
#include <ania/memory/scope_index.hpp>

namespace ania::memory {

template <class Traits>
struct detail::manager_definitions_for {};

/// One scope's index behind its own lock: operations on different scopes run in parallel, and reads of one
/// scope too (read_index). Slots are made once and never freed (reload() empties one), so a reference stays
/// valid without the map's lock.
template <class Traits>
struct basic_manager<Traits>::slot {
    std::shared_mutex mutex;
    detail::scope_index index;
    bool loaded = false;
};

template <class Traits>
struct basic_manager<Traits>::engine {
    engine(tokenizer_type& tokenizer, exact_duplicate_fold fold, std::uint64_t seed)
        : indexer(tokenizer, fold), near(tokenizer), rng(seed) {}
    detail::indexer<tokenizer_type> indexer;
    detail::near_duplicate_finder<tokenizer_type> near;
    std::mutex rng_mutex;
    std::mt19937_64 rng;
};

template <class Traits>
template <class Result, class Status>
Result basic_manager<Traits>::failed(const std::exception& ex, const char* what) const {
    Result r;
    r.status = Status::failed;
    r.error = ex.what();
    log_to(opt_.log, log_level::error, std::string("memory: ") + what + " failed: " + ex.what());
    return r;
}

/// Runs one backend write for the scope. With a versioned backend the scope's index keeps the version
/// the write produced when it is the next one (nobody else wrote in between), and is marked stale
/// otherwise, so that it is reloaded before its next use.
template <class Traits>
template <class Write>
void basic_manager<Traits>::write_backend(detail::scope_index& si, Write&& w) {
    if constexpr (versioned_memory_backend<backend_type>) {
        const std::uint64_t v = w();
        constexpr std::uint64_t stale = detail::scope_index::stale_version;
        si.version = si.version != stale && v == si.version + 1 ? v : stale;
    } else {
        w();
    }
}

template <class Traits>
basic_manager<Traits>::basic_manager(backend_type& backend, manager_options opt, policies p)
    : backend_(backend), opt_(std::move(opt)), embedder_(std::move(p.embedder)), tokenizer_(std::move(p.tokenizer)), clock_(std::move(p.clock)), sim_(std::move(p.similarity)), engine_(std::make_unique<engine>(tokenizer_, opt_.exact_fold, opt_.seed ? opt_.seed : std::random_device{}())) {
    if (opt_.near_duplicate_threshold) sim_.threshold = *opt_.near_duplicate_threshold;
    if (!backend_.enabled())
        log_to(opt_.log, log_level::error, "memory: the backend is unavailable, long-term memory is disabled");
}

template <class Traits>
auto basic_manager<Traits>::clean_tags(const std::vector<std::string>& raw) const -> std::vector<std::string> {
    std::vector<std::string> out;
    for (const std::string& t : raw) {
        if (out.size() >= opt_.max_tags) break;
        std::string c = clean(t, opt_.max_tag_runes);
        if (!c.empty()) out.push_back(std::move(c));
    }
    return out;
}

template <class Traits>
auto basic_manager<Traits>::save(const scope& s, std::string_view content, std::string_view user_id, std::vector<std::string> tags) -> save_result {
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
        near_duplicate_report near = engine_->near.check(*si, sim_, text);
        entry e;
        e.id = fresh_id(*si);
        e.user_id = clean_user_id(user_id);
        e.content = text;
        e.tags = tags;  // copies: a retry needs them again
        e.embedding = vec;
        e.created_at = next_timestamp(*si);
        try {
            const std::optional<std::uint64_t> v = backend_insert(s, e, si->version, change_kind::saved);
            if (!v) {  // someone else wrote since the checks: check again on the scope as it is now
                si->version = detail::scope_index::stale_version;
                if (attempt < 16) continue;
                throw error(errc::store_busy, "the scope kept changing under the save (16 attempts)");
            }
            if constexpr (versioned_memory_backend<backend_type>) si->version = *v;
        } catch (const std::exception& ex) {
            return failed<save_result, save_status>(ex, "save");
        }
        si->push_back(e, engine_->indexer.make(si->vocab, e));
        engine_->indexer.compact_if_stale(*si, sim_);
        r.saved = std::move(e);
        r.similar = std::move(near.similar);
        r.status = near.is_duplicate ? save_status::saved_near_duplicate : save_status::saved;
        return r;
    }
}

template <class Traits>
auto basic_manager<Traits>::update(const scope& s, std::string_view id, std::optional<std::string_view> content, std::optional<std::string_view> user_id, std::optional<std::vector<std::string>> tags) -> update_result {
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
        write_backend(si, [&] { return backend_update(s, e, change_kind::updated, si.entries[i]); });
        detail::indexed_entry x = engine_->indexer.make(si.vocab, e);
        si.assign(i, e, std::move(x));
        engine_->indexer.compact_if_stale(si, sim_);
        r.status = update_status::updated;
        r.updated = std::move(e);
        return r;
    } catch (const std::exception& ex) {
        return failed<update_result, update_status>(ex, "update");
    }
}

template <class Traits>
auto basic_manager<Traits>::forget(const scope& s, std::string_view id) -> forget_result {
    forget_result r;
    if (!enabled()) { r.status = forget_status::disabled; return r; }
    slot& sl = slot_of(s);
    std::lock_guard lock(sl.mutex);
    try {
        detail::scope_index& si = index_of(sl, s);
        const std::size_t i = si.find(id);
        if (i == detail::scope_index::npos) { r.status = forget_status::not_found; return r; }
        write_backend(si, [&] { return backend_erase(s, si.entries[i]); });
        si.erase(i);
        r.status = forget_status::forgotten;
        return r;
    } catch (const std::exception& ex) {
        return failed<forget_result, forget_status>(ex, "forget");
    }
}

namespace detail {
/// A versioned backend's write returns the scope's new version; an unversioned one's returns nothing: 0.
template <class F>
std::uint64_t version_of(F&& write) {
    if constexpr (std::is_void_v<std::invoke_result_t<F&>>) {
        write();
        return 0;
    } else {
        return write();
    }
}
} // namespace detail

template <class Traits>
template <class Note, class Call>
auto basic_manager<Traits>::recorded(Note&& note, Call&& call) {
    if constexpr (history_memory_backend<backend_type>) {
        if (recording()) return call(note());
    }
    return call();
}

template <class Traits>
auto basic_manager<Traits>::backend_update(const scope& s, const entry& e, change_kind kind, const entry& before) -> std::uint64_t {
    return recorded([&] { return version_note::of(kind, e, ania::detail::utc_timestamp(clock_.now()), &before, opt_.versions_kept); },
                    [&](const auto&... note) { return detail::version_of([&] { return backend_.update(s, e, note...); }); });
}

template <class Traits>
auto basic_manager<Traits>::backend_erase(const scope& s, const entry& before) -> std::uint64_t {
    return recorded(
        [&] { return version_note::of(change_kind::forgotten, before, ania::detail::utc_timestamp(clock_.now()), &before, opt_.versions_kept); },
        [&](const auto&... note) { return detail::version_of([&] { return backend_.erase(s, before.id, note...); }); });
}

template <class Traits>
auto basic_manager<Traits>::backend_insert(const scope& s, const entry& e, std::uint64_t expected, change_kind kind)
    -> std::optional<std::uint64_t> {
    return recorded([&] { return version_note::of(kind, e, e.created_at, nullptr, opt_.versions_kept); },
                    [&](const auto&... note) -> std::optional<std::uint64_t> {
                        if constexpr (versioned_memory_backend<backend_type>) return backend_.insert_if(s, e, expected, note...);
                        else { backend_.insert(s, e, note...); return 0; }
                    });
}

template <class Traits>
auto basic_manager<Traits>::history(const scope& s, std::string_view id) -> std::vector<memory_version> {
    if constexpr (history_memory_backend<backend_type>) {
        if (enabled()) return backend_.history(s, id);
    }
    return {};
}

template <class Traits>
auto basic_manager<Traits>::restore(const scope& s, std::string_view id, std::uint64_t seq) -> update_result {
    update_result r;
    if (!enabled()) { r.status = update_status::disabled; return r; }
    try {
        const std::vector<memory_version> versions = history(s, id);
        const auto it = std::find_if(versions.begin(), versions.end(), [&](const memory_version& v) { return v.seq == seq; });
        if (it == versions.end()) { r.status = update_status::not_found; return r; }
        std::vector<float> vec = embed(it->content);
        slot& sl = slot_of(s);
        std::lock_guard lock(sl.mutex);
        detail::scope_index& si = index_of(sl, s);
        const std::size_t i = si.find(id);
        const bool forgotten = i == detail::scope_index::npos;
        if (forgotten && si.entries.size() >= opt_.max_entries) { r.status = update_status::full; return r; }
        entry e = forgotten ? entry{} : si.entries[i];
        e.content = it->content;
        e.user_id = it->user_id;
        e.tags = it->tags;
        e.embedding = std::move(vec);
        if (!forgotten) {
            write_backend(si, [&] { return backend_update(s, e, change_kind::restored, si.entries[i]); });
            detail::indexed_entry x = engine_->indexer.make(si.vocab, e);
            si.assign(i, e, std::move(x));
        } else {
            e.id = std::string(id);
            e.created_at = next_timestamp(si);
            const std::optional<std::uint64_t> v = backend_insert(s, e, si.version, change_kind::restored);
            if constexpr (versioned_memory_backend<backend_type>) {
                if (!v) {  // someone else wrote meanwhile: one plain attempt on the scope as it is now
                    si.version = detail::scope_index::stale_version;
                    throw error(errc::store_busy, "the scope changed during the restore; try again");
                }
                si.version = *v;
            }
            si.push_back(e, engine_->indexer.make(si.vocab, e));
        }
        engine_->indexer.compact_if_stale(si, sim_);
        r.status = update_status::updated;
        r.updated = std::move(e);
        return r;
    } catch (const std::exception& ex) {
        return failed<update_result, update_status>(ex, "restore");
    }
}

template <class Traits>
auto basic_manager<Traits>::search(const scope& s, std::string_view query, std::size_t limit) -> std::vector<search_hit> {
    if (!enabled()) return {};
    if (limit == 0) limit = static_cast<std::size_t>(-1);
    const std::string q = clean(query, opt_.max_query_runes);
    std::vector<float> qvec = q.empty() ? std::vector<float>{} : embed(q);
    slot& sl = slot_of(s);
    return read_index(sl, s, !q.empty(), [&](const detail::scope_index& si) {
        std::vector<search_hit> hits;
        if (q.empty()) {
            for (std::size_t i = si.entries.size(); i-- > 0 && hits.size() < limit;) hits.push_back({i, 0.0, si.entries[i]});
            return hits;
        }
        const std::vector<double> scores = detail::keyword_scores(si, tokenizer_, q, qvec);
        std::vector<std::size_t> order;
        for (std::size_t i = 0; i < scores.size(); ++i)
            if (scores[i] > 0) order.push_back(i);
        std::stable_sort(order.begin(), order.end(),
                         [&](std::size_t a, std::size_t b) { return scores[a] > scores[b]; });
        for (std::size_t k = 0; k < order.size() && k < limit; ++k) hits.push_back({order[k], scores[order[k]], si.entries[order[k]]});
        return hits;
    });
}

template <class Traits>
auto basic_manager<Traits>::scores(const scope& s, std::string_view query) -> std::vector<double> {
    if (!enabled()) return {};
    const std::string q = clean(query, opt_.max_query_runes);
    std::vector<float> qvec = embed(q);
    slot& sl = slot_of(s);
    return read_index(sl, s, true, [&](const detail::scope_index& si) { return detail::keyword_scores(si, tokenizer_, q, qvec); });
}

template <class Traits>
auto basic_manager<Traits>::near_duplicate(const scope& s, std::string_view content) -> near_duplicate_report {
    if (!enabled()) return {};
    std::string repaired;
    std::string_view text = content;
    if (!text::is_valid_utf8(text)) text = repaired = text::repair_utf8(content);  // copy only when needed
    text = text::trim(text::truncate_runes(text::trim(text), opt_.max_content_runes));
    slot& sl = slot_of(s);
    std::lock_guard lock(sl.mutex);
    return engine_->near.check(index_of(sl, s), sim_, text);
}

template <class Traits>
auto basic_manager<Traits>::list(const scope& s) -> std::vector<entry> {
    if (!enabled()) return {};
    slot& sl = slot_of(s);
    return read_index(sl, s, false, [](const detail::scope_index& si) { return si.entries; });
}

template <class Traits>
auto basic_manager<Traits>::get(const scope& s, std::string_view id) -> std::optional<entry> {
    if (!enabled()) return std::nullopt;
    slot& sl = slot_of(s);
    return read_index(sl, s, false, [&](const detail::scope_index& si) -> std::optional<entry> {
        const std::size_t i = si.find(id);
        if (i == detail::scope_index::npos) return std::nullopt;
        return si.entries[i];
    });
}

template <class Traits>
auto basic_manager<Traits>::size(const scope& s) -> std::size_t {
    if (!enabled()) return 0;
    slot& sl = slot_of(s);
    return read_index(sl, s, false, [](const detail::scope_index& si) { return si.entries.size(); });
}

template <class Traits>
auto basic_manager<Traits>::stats(const scope& s) -> scope_stats {
    if (!enabled()) return {};
    slot& sl = slot_of(s);
    return read_index(sl, s, false, [](const detail::scope_index& si) { return scope_stats{si.entries.size(), si.vocab.size()}; });
}

template <class Traits>
auto basic_manager<Traits>::inject_block(const scope& s, std::string_view user_text, std::string_view header) -> std::string {
    return memory::inject_block(*this, s, user_text, header);
}

template <class Traits>
auto basic_manager<Traits>::backfill(std::size_t max_entries) -> std::size_t {
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

template <class Traits>
auto basic_manager<Traits>::reload(const scope& s) -> void {
    if (!enabled()) return;
    slot& sl = slot_of(s);
    std::lock_guard lock(sl.mutex);
    sl.loaded = false;
    sl.index = {};
}

template <class Traits>
auto basic_manager<Traits>::reindex(const scope& s) -> void {
    if (!enabled()) return;
    slot& sl = slot_of(s);
    std::lock_guard lock(sl.mutex);
    if (!sl.loaded) index_of(sl, s);
    else engine_->indexer.build(sl.index, sim_);
}

template <class Traits>
auto basic_manager<Traits>::clean(std::string_view raw, std::size_t max_runes) -> std::string {
    const std::string fixed = text::repair_utf8(raw);
    return std::string(text::trim(text::truncate_runes(text::trim(fixed), max_runes)));
}

template <class Traits>
auto basic_manager<Traits>::embed(const std::string& text) -> std::vector<float> {
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

template <class Traits>
auto basic_manager<Traits>::slot_of(const scope& s) -> slot& {
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

template <class Traits>
auto basic_manager<Traits>::is_current(const slot& sl, const scope& s) -> bool {
    if (!sl.loaded) return false;
    if constexpr (versioned_memory_backend<backend_type>) return backend_.version(s) == sl.index.version;
    return true;
}

template <class Traits>
auto basic_manager<Traits>::index_of(slot& sl, const scope& s) -> detail::scope_index& {
    if (is_current(sl, s)) return sl.index;
    detail::scope_index fresh;
    if constexpr (versioned_memory_backend<backend_type>)
        fresh.version = backend_.version(s);  // before the rows: a write in between means one more reload
    fresh.entries = backend_.load(s);
    engine_->indexer.build(fresh, sim_);
    sl.index = std::move(fresh);
    sl.loaded = true;
    return sl.index;
}

template <class Traits>
template <class F>
auto basic_manager<Traits>::read_index(slot& sl, const scope& s, bool postings, F&& f) {
    {
        std::shared_lock lock(sl.mutex);
        if (!(postings && sl.index.postings_dirty) && is_current(sl, s)) return f(std::as_const(sl.index));
    }
    std::lock_guard lock(sl.mutex);
    detail::scope_index& si = index_of(sl, s);
    if (postings) si.ensure_postings(sim_);
    return f(std::as_const(si));
}

template <class Traits>
auto basic_manager<Traits>::fresh_id(const detail::scope_index& si) -> std::string {
    static constexpr char hex[] = "0123456789abcdef";
    for (int attempt = 0;; ++attempt) {
        std::string id(8, '0');
        const std::uint32_t v = [this] {
            std::lock_guard lock(engine_->rng_mutex);
            return static_cast<std::uint32_t>(engine_->rng());
        }();
        for (int k = 0; k < 8; ++k) id[static_cast<std::size_t>(k)] = hex[(v >> (28 - 4 * k)) & 0xF];
        if (si.find(id) == detail::scope_index::npos) return id;  // a collision is retried, never overwritten
        if (attempt > 1000) throw error(errc::store_error, "memory: no free id");
    }
}

template <class Traits>
auto basic_manager<Traits>::next_timestamp(const detail::scope_index& si) -> std::string {
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

template <class Traits>
basic_manager<Traits>::~basic_manager() = default;

} // namespace ania::memory
