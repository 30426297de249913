// ania/session/janitor.hpp -- the janitor of a session_cache: one eviction pass (the policy's choices, then each
// victim evicted only if, under its lock, it is still idle, not responding and unqueued: SPEC §3's safe
// eviction), and the thread that runs a pass every tick. Not API.
// SPDX-License-Identifier: MIT
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <list>
#include <memory>
#include <mutex>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include <ania/concepts.hpp>
#include <ania/detail/radix_sort.hpp>
#include <ania/session/block_pool.hpp>
#include <ania/session/entry.hpp>
#include <ania/session/results.hpp>

namespace ania::detail {

/// One pass over the shards: what `session_cache::tick()` does. Passes are serialised (its scratch is reused,
/// so a pass allocates nothing once it has grown). The snapshot points at entries without owning them: a pass
/// removes entries itself, and an entry removed by anyone else meanwhile (`session_cache::evict`) is handed to
/// `retire()`, which keeps it alive until the pass ends. `Hooks` is the cache: `hibernate(key, agent)`,
/// `tells_evictions()`, `evicted(key, why)` (after the locks).
template <class Agent, class Eviction>
class eviction_pass {
public:
    using entry = session_entry<Agent>;
    using shard = session_shard<entry>;

    explicit eviction_pass(const session_limits& limits) : policy_(limits) {}

    template <class Hooks>
    std::size_t run(shard* shards, block_pool& pool, std::int64_t now, session_counter_cells& counters, Hooks& hooks) {
        std::lock_guard pass(m_);
        {
            std::lock_guard l(retire_m_);
            running_ = true;
        }
        // Entries freed by an earlier pass and not reused since go back to the heap; those this pass frees
        // are marked for the next one (so memory follows the resident count a tick late).
        pool.trim();
        struct settle_at_end {
            block_pool& pool;
            ~settle_at_end() { pool.settle(); }
        } settle{pool};
        struct end_of_pass {  // before the settle: the retired entries go back to the pool in this pass
            eviction_pass& p;
            ~end_of_pass() {
                std::list<std::shared_ptr<entry>> freed;
                {
                    std::lock_guard l(p.retire_m_);
                    p.running_ = false;
                    freed.swap(p.retired_);
                }
            }
        } end{*this};
        // A policy that can tell it would choose nothing (idle, LRU, both) is asked first, from the resident
        // count and each shard's lower bound of its oldest activity: activity only moves forward, so a bound
        // taken at the last scan (or lowered by an insertion since) stays a bound. A clock that went back
        // since the last pass voids the bounds: that pass scans.
        if constexpr (prescreening_eviction_policy<Eviction>) {
            if (now >= last_tick_now_) {
                std::size_t resident = 0;
                std::int64_t oldest = no_activity;
                for (shard& s : std::span(shards, session_shard_count)) {
                    const shard_mutex::reader l(s.m);
                    resident += s.map.size();
                    oldest = std::min(oldest, s.oldest);
                }
                if (!policy_.may_select(resident, oldest, now)) {
                    last_tick_now_ = now;
                    return 0;
                }
            }
        }
        last_tick_now_ = now;
        snapshot_.clear();
        view_.clear();
        for (std::size_t k = 0; k < session_shard_count; ++k) {
            shard& s = shards[k];
            // Shared: lookups and touches go on meanwhile. The bounds written below are written only by
            // insertions (exclusive) and by passes (serialised).
            const shard_mutex::reader l(s.m);
            range_[k] = snapshot_.size();  // the scan goes shard by shard: shard k is [range_[k], range_[k + 1])
            std::int64_t oldest = no_activity;
            const auto& slots = s.map.slots();
            for (std::size_t j = 0; j < slots.size(); ++j) {
                // The slots are one array; the entries are in the heap: ask for them a little ahead.
                if (j + scan_ahead < slots.size()) prefetch_scanned(slots[j + scan_ahead].entry.get());
                entry* e = slots[j].entry.get();
                if (!e) continue;
                const std::int64_t at = e->last_active.load(std::memory_order_acquire);
                oldest = std::min(oldest, at);
                snapshot_.push_back(e);
                view_.push_back({e->key, at, e->messages.load(std::memory_order_relaxed), e->bytes.load(std::memory_order_relaxed)});
            }
            s.oldest = oldest;
            s.inserted = no_activity;
        }
        range_[session_shard_count] = snapshot_.size();
        choices_.clear();
        policy_.select(view_, now, choices_);
        // The choices as one byte per scanned session (0: kept, else the reason + 1): the victims then come
        // shard by shard in scan order, no sort. Each shard is locked once for all of its victims, and a
        // victim's own lock is only tried (the spec's try_lock): failing means it is responding, and waiting
        // here would invert the order respond() takes the two locks in.
        chosen_.assign(snapshot_.size(), 0);
        for (const eviction_choice& c : choices_)
            if (c.index < chosen_.size()) chosen_[c.index] = static_cast<std::uint8_t>(static_cast<std::uint8_t>(c.why) + 1);
        std::size_t evicted = 0;
        std::uint64_t by_reason[2] = {0, 0};  // idle, lru: added to the counters once
        auto& gone = gone_;    // the agents, destroyed after every lock is released
        auto& dead = dead_;    // the entries whose keys on_evicted is told after the locks
        gone.clear();          // (left over only if an earlier pass threw)
        dead.clear();
        told_.clear();
        for (std::size_t k = 0; k < session_shard_count; ++k) {
            const auto first = chosen_.begin() + static_cast<std::ptrdiff_t>(range_[k]);
            const auto last = chosen_.begin() + static_cast<std::ptrdiff_t>(range_[k + 1]);
            if (std::find_if(first, last, [](std::uint8_t c) { return c != 0; }) == last) continue;
            shard& s = shards[k];
            std::lock_guard sl(s.m);
            std::int64_t survivors = no_activity;
            for (std::size_t i = range_[k]; i < range_[k + 1]; ++i) {
                // Each victim is an entry somewhere in the heap: ask for its lines a few victims ahead, so
                // the checks below do not wait on memory one after the other.
                if (const std::size_t ahead = i + prefetch_distance; ahead < range_[k + 1] && chosen_[ahead] != 0)
                    prefetch_all(snapshot_[ahead], 16);
                if (chosen_[i] == 0 || !evict_one(s, i, dead, gone, counters, hooks)) {
                    survivors = std::min(survivors, view_[i].last_active);
                    continue;
                }
                ++evicted;
                ++by_reason[chosen_[i] - 1 == static_cast<std::uint8_t>(evict_reason::idle) ? 0 : 1];
            }
            // The bound without the evicted (it would keep the next passes scanning): the survivors as
            // scanned, and whatever was inserted since.
            s.oldest = std::min(survivors, s.inserted);
            s.map.compact();
        }
        counters.evicted_idle.fetch_add(by_reason[0], std::memory_order_relaxed);
        counters.evicted_lru.fetch_add(by_reason[1], std::memory_order_relaxed);
        snapshot_.clear();
        view_.clear();
        for (const auto& [at, why] : told_) hooks.evicted(dead[at]->key, why);
        told_.clear();
        // Emptied, capacity kept: a tick allocates nothing once the scratch has grown (a large block per
        // pass would also make glibc consolidate its free lists each time).
        dead.clear();
        // In address order: glibc merges each freed agent with its free neighbours, and the one freed just
        // before is then in cache (about 15% of the destruction when thousands go at once). A radix sort:
        // std::sort's comparisons cost half as much as the destruction they speed up.
        detail::radix_sort_by(gone, gone_scratch_, [](const std::unique_ptr<Agent>& a) { return reinterpret_cast<std::uintptr_t>(a.get()); });
        for (std::size_t i = 0; i < gone.size(); ++i) {
            // Its destructor reads most of an agent's cache lines: all of them are asked for, a few agents ahead.
            if (i + destroy_ahead < gone.size()) prefetch_all(gone[i + destroy_ahead].get(), 16);
            gone[i].reset();
        }
        gone.clear();
        return evicted;
    }

    /// For an entry taken out of its table outside a pass (`session_cache::evict`), called under its shard's
    /// lock: while a pass runs, its snapshot may point at the entry, so the pass keeps it until it ends.
    /// `held` is one node made before the locks: no allocation here, so no failure after the entry is taken.
    void retire(std::list<std::shared_ptr<entry>>& held) noexcept {
        std::lock_guard l(retire_m_);
        if (running_) retired_.splice(retired_.end(), held);
    }

private:
    static constexpr std::size_t prefetch_distance = 8;
    static constexpr std::size_t scan_ahead = 64;  // slots, at most half of them used
    static constexpr std::size_t destroy_ahead = 3;
    /// The lines of what a scan reads of an entry: its first fields (key, last_active, messages, bytes), which
    /// straddle two lines unless the entry starts one. Integer arithmetic: `e` is null for an empty slot.
    static void prefetch_scanned(const entry* e) noexcept {
        constexpr std::size_t scanned = sizeof(std::string) + sizeof(std::int64_t) + 2 * sizeof(std::size_t);
        const auto at = reinterpret_cast<std::uintptr_t>(e);
        prefetch(reinterpret_cast<const void*>(at));
        prefetch(reinterpret_cast<const void*>(at + scanned - 1));
    }
    /// Under s's lock: evicts the session scanned at `i` if it is still the same entry, idle since the scan,
    /// not responding and with nothing queued. Its agent goes to `gone` (destroyed by the caller after the
    /// locks). The entry is alive: passes are serialised, and one removed by evict() meanwhile was retired.
    template <class Hooks>
    bool evict_one(shard& s, std::size_t i, std::vector<std::shared_ptr<entry>>& dead, std::vector<std::unique_ptr<Agent>>& gone,
                   session_counter_cells& counters, Hooks& hooks) {
        const auto why = static_cast<evict_reason>(chosen_[i] - 1);
        entry& e = *snapshot_[i];
        session_entry_lock el(e.m, std::try_to_lock);
        if (!el || e.owned || !e.pending.empty() || e.evicted || e.last_active.load(std::memory_order_acquire) != view_[i].last_active) {
            counters.skipped_busy.fetch_add(1, std::memory_order_relaxed);
            return false;
        }
        std::shared_ptr<entry> held = s.map.take(&e, e.hash);  // compare-and-delete: this very entry
        if (!held) return false;
        e.evicted = true;
        if (e.agent) hooks.hibernate(e.key, *e.agent);
        gone.push_back(std::move(e.agent));
        // Out of the table, under the shard's lock, with no other reference: no thread can reach the entry
        // again, so it dies locked (a small_mutex may) and the unlock's atomic exchange is saved. A thread that
        // holds a reference (it found the entry before this pass took it) sees `evicted` once it has the lock.
        if (held.use_count() == 1)
            (void)el.release();
        else
            el.unlock();
        // The entry is freed here, while this pass has it in cache (after the pass it costs a miss or three
        // each: 4x slower), unless on_evicted needs its key after the locks.
        if (hooks.tells_evictions()) {
            dead.push_back(std::move(held));
            told_.emplace_back(dead.size() - 1, why);
        } else {
            held.reset();
        }
        return true;
    }


    Eviction policy_;
    std::mutex m_;  // one pass at a time; its scratch is reused
    std::int64_t last_tick_now_ = std::numeric_limits<std::int64_t>::min();
    std::vector<entry*> snapshot_;  // alive until this pass removes them, or retired until it ends
    std::mutex retire_m_;  // guards running_ and retired_ (evict() runs on any thread)
    bool running_ = false;
    std::list<std::shared_ptr<entry>> retired_;
    std::vector<resident_session> view_;
    std::vector<eviction_choice> choices_;
    std::size_t range_[session_shard_count + 1] = {};
    std::vector<std::uint8_t> chosen_;  // per scanned session: 0, the reason + 1
    std::vector<std::unique_ptr<Agent>> gone_, gone_scratch_;
    std::vector<std::shared_ptr<entry>> dead_;
    std::vector<std::pair<std::size_t, evict_reason>> told_;  // (index into the pass's dead_, why)
};

} // namespace ania::detail
