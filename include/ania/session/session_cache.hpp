// ania/session/session_cache.hpp -- the resident sessions of a bot (SPEC §3): one agent per conversation,
// built on demand from its store, evicted by a janitor when idle or past the cap, cleared after a run of
// group messages that do not address the bot.
// SPDX-License-Identifier: MIT
#pragma once

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <exception>
#include <functional>
#include <limits>
#include <memory>
#include <mutex>
#include <semaphore>
#include <stop_token>
#include <string>
#include <string_view>
#include <thread>
#include <unordered_map>
#include <utility>
#include <vector>

#include <ania/agent/chat.hpp>
#include <ania/agent/concepts.hpp>
#include <ania/concepts.hpp>
#include <ania/defaults.hpp>
#include <ania/error.hpp>
#include <ania/log.hpp>
#include <ania/detail/radix_sort.hpp>
#include <ania/detail/small_mutex.hpp>
#include <ania/detail/striped_mutex.hpp>
#include <ania/session/block_pool.hpp>
#include <ania/session/entry_table.hpp>
#include <ania/session/eviction.hpp>
#include <ania/session/options.hpp>
#include <ania/session/results.hpp>
#include <ania/tool.hpp>

namespace ania {

/// The cache of agents, keyed by conversation (`g:<id>` / `f:<id>`). `respond` builds a session's agent on
/// demand (the factory's agent loads its history through the writer, so queued appends are seen), runs the
/// turn while it owns the session, and queues messages that arrive meanwhile; the owner drains the queue
/// before it lets go, and lets go only with the queue empty, atomically (no message is stranded). Only
/// addressed messages refresh a session's activity. The janitor (one thread, `options.tick`) asks the
/// eviction policy which sessions to drop, then evicts each only if, under its lock, it is not responding,
/// has nothing queued and was not touched since the scan, and the map still holds that same entry
/// (compare-and-delete). Eviction drops the in-memory agent only; the store keeps the history. One entry
/// owns all per-session state (agent, queue, counter, stop handle), so eviction or a clear frees all of it.
/// Every member is thread-safe. The destructor stops the janitor and flushes the agents' writers.
template <class Agent, eviction_policy Eviction = idle_then_lru, agent_clock Clock = steady_clock_policy>
class session_cache {
public:
    using agent_type = Agent;
    using eviction_type = Eviction;
    using factory_type = std::function<std::unique_ptr<Agent>(const std::string& key)>;

    explicit session_cache(factory_type make, session_options opt = {}, Clock clock = {})
        : make_(std::move(make)), opt_(std::move(opt)), clock_(std::move(clock)), policy_(opt_.limits),
          slots_(static_cast<std::ptrdiff_t>(opt_.max_concurrent_replies > 0 ? opt_.max_concurrent_replies : 1)) {
        if (!make_) throw error(errc::invalid_argument, "session_cache: the agent factory is empty");
        if (opt_.janitor) janitor_ = std::thread([this] { run_janitor(); });
    }
    session_cache(const session_cache&) = delete;
    session_cache& operator=(const session_cache&) = delete;

    ~session_cache() {
        {
            std::lock_guard l(janitor_mutex_);
            stopping_ = true;
        }
        janitor_wake_.notify_all();
        if (janitor_.joinable()) janitor_.join();
        for (shard& s : shards_) {  // pending persistence reaches the store before the agents go
            std::lock_guard l(s.m);
            s.map.for_each([](entry& e) {
                std::lock_guard el(e.m);
                if (e.agent) e.agent->writer().flush();
            });
        }
    }

    /// A message for session `key`. `addressed`: it is for the bot (a private message, an @-mention, a reply
    /// to the bot); only those run a turn and refresh activity. Blocks while this call runs turns.
    respond_result respond(std::string_view key, user_input input, bool addressed = true, const chat_options& copt = {}) {
        bool clearing = false;
        while (true) {
            std::shared_ptr<entry> e = get_or_create(key);
            entry_lock l(e->m);
            if (e->evicted) continue;  // evicted between the lookup and the lock: a new entry
            if (!addressed) {
                if (!clearing) {
                    if (opt_.group_auto_clear <= 0 || ++e->non_addressed < opt_.group_auto_clear) return {respond_status::ignored, {}, false, 0};
                    clearing = true;
                }
                wait_on_shard(*e, [&](auto& cv) { cv.wait(l, [&] { return !e->owned; }); });  // a clear waits for the reply
                if (e->evicted) continue;
                e->owned = true;
                e->non_addressed = 0;
                l.unlock();
                respond_result r{respond_status::cleared, {}, false, 0};
                clear_owned(*e, key);
                drain(*e, key, copt, r);
                return r;
            }
            e->non_addressed = 0;
            touch(*e);
            respond_result r{respond_status::queued, {}, false, 0};
            if (e->owned && opt_.when_busy == busy_policy::reject) return {respond_status::rejected, {}, false, 0};
            if (e->owned && opt_.when_busy == busy_policy::latest_only && !e->pending.empty()) {
                r.dropped = e->pending.size();
                counters_.dropped_pending.fetch_add(r.dropped, std::memory_order_relaxed);
                e->pending.clear();
            }
            if (opt_.max_pending > 0 && e->pending.size() >= opt_.max_pending) {
                e->pending.erase(e->pending.begin());  // at most max_pending moves: bounded
                r.dropped = 1;
                counters_.dropped_pending.fetch_add(1, std::memory_order_relaxed);
            }
            e->pending.push_back(std::move(input));
            if (opt_.debounce.count() > 0) {
                e->last_arrival = std::chrono::steady_clock::now();
                if (e->waiters > 0) shard_of(*e).idle.notify_all();  // an owner waiting out the debounce starts waiting again
            }
            if (e->owned) {
                r.tell_queued = !e->told_queued;
                e->told_queued = true;
                return r;
            }
            e->owned = true;
            l.unlock();
            r.status = respond_status::replied;
            drain(*e, key, copt, r);
            return r;
        }
    }

    /// Refreshes the activity of a resident session (an interaction addressed to the AI that does not go
    /// through respond). Returns false when the session is not resident.
    bool touch(std::string_view key) {
        const std::size_t h = hash_of(key);
        const shard& s = shards_[h % shard_count];
        const shard_mutex::reader l(s.m);
        const auto* e = s.map.find(key, h);
        if (!e) return false;
        touch(**e);
        return true;
    }

    /// `/stop`: cancels the reply in progress (at its next boundary) and empties the queue. Returns whether
    /// the session was responding.
    bool stop(std::string_view key) {
        const std::shared_ptr<entry> e = find(key);
        if (!e) return false;
        std::lock_guard l(e->m);
        e->pending.clear();
        e->told_queued = false;
        if (e->stop.stop_possible()) e->stop.request_stop();
        return e->owned;
    }

    /// Clears a session now (window, store, run-time tools), after the reply in progress.
    void clear(std::string_view key) {
        const std::shared_ptr<entry> e = own(key);
        {
            std::lock_guard l(e->m);
            e->non_addressed = 0;
        }
        respond_result r;
        clear_owned(*e, key);
        drain(*e, key, {}, r);
    }

    /// One janitor pass (the janitor thread calls it every `options.tick`). Returns how many it evicted.
    /// Passes are serialised; only a pass removes entries, so the snapshot may point at them.
    std::size_t tick() {
        std::lock_guard pass(tick_mutex_);
        // Entries freed by an earlier pass and not reused since go back to the heap; those this pass frees
        // are marked for the next one (so memory follows the resident count a tick late).
        entry_pool_.trim();
        struct settle_at_end {
            detail::block_pool& pool;
            ~settle_at_end() { pool.settle(); }
        } settle{entry_pool_};
        const std::int64_t now = now_ns();
        // A policy that can tell it would choose nothing (idle, LRU, both) is asked first, from the resident
        // count and each shard's lower bound of its oldest activity: activity only moves forward, so a bound
        // taken at the last scan (or lowered by an insertion since) stays a bound. A clock that went back
        // since the last pass voids the bounds: that pass scans.
        if constexpr (prescreening_eviction_policy<Eviction>) {
            if (now >= last_tick_now_) {
                std::size_t resident = 0;
                std::int64_t oldest = no_activity;
                for (shard& s : shards_) {
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
        for (std::size_t k = 0; k < shard_count; ++k) {
            shard& s = shards_[k];
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
        range_[shard_count] = snapshot_.size();
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
        for (std::size_t k = 0; k < shard_count; ++k) {
            const auto first = chosen_.begin() + static_cast<std::ptrdiff_t>(range_[k]);
            const auto last = chosen_.begin() + static_cast<std::ptrdiff_t>(range_[k + 1]);
            if (std::find_if(first, last, [](std::uint8_t c) { return c != 0; }) == last) continue;
            shard& s = shards_[k];
            std::lock_guard sl(s.m);
            std::int64_t survivors = no_activity;
            for (std::size_t i = range_[k]; i < range_[k + 1]; ++i) {
                // Each victim is an entry somewhere in the heap: ask for its lines a few victims ahead, so
                // the checks below do not wait on memory one after the other.
                if (const std::size_t ahead = i + prefetch_distance; ahead < range_[k + 1] && chosen_[ahead] != 0)
                    prefetch_all(snapshot_[ahead], 16);
                if (chosen_[i] == 0 || !evict_one(s, i, dead, gone)) {
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
        counters_.evicted_idle.fetch_add(by_reason[0], std::memory_order_relaxed);
        counters_.evicted_lru.fetch_add(by_reason[1], std::memory_order_relaxed);
        snapshot_.clear();
        view_.clear();
        for (const auto& [at, why] : told_) notify_evicted(dead[at]->key, why);
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

    [[nodiscard]] std::size_t resident() const {
        std::size_t n = 0;
        for (const shard& s : shards_) {
            const shard_mutex::reader l(s.m);
            n += s.map.size();
        }
        return n;
    }
    /// About how many bytes the resident sessions' windows hold (each as of its last turn).
    [[nodiscard]] std::size_t resident_bytes() const {
        std::size_t n = 0;
        for (const shard& s : shards_) {
            const shard_mutex::reader l(s.m);
            s.map.for_each([&](const entry& e) { n += e.bytes.load(std::memory_order_relaxed); });
        }
        return n;
    }
    /// Sessions whose run-time tools are kept for their return (session_options::hibernate).
    [[nodiscard]] std::size_t hibernated() const {
        std::lock_guard l(hibernate_mutex_);
        return hibernated_.size();
    }
    [[nodiscard]] bool contains(std::string_view key) const { return find(key) != nullptr; }
    [[nodiscard]] session_counters counters() const {
        return {counters_.created.load(), counters_.evicted_idle.load(), counters_.evicted_lru.load(),
                counters_.cleared.load(), counters_.skipped_busy.load(), counters_.dropped_pending.load()};
    }
    /// Messages waiting in a session's queue (0 when it is not resident).
    [[nodiscard]] std::size_t pending(std::string_view key) const {
        const std::shared_ptr<entry> e = find(key);
        if (!e) return 0;
        std::lock_guard l(e->m);
        return e->pending.size();
    }
    /// Runs `f(agent)` while owning the session (after any reply in progress): for tools added at run time,
    /// inspection, tests. Builds the agent if it is not resident.
    template <class F>
    decltype(auto) with_agent(std::string_view key, F&& f) {
        const std::shared_ptr<entry> e = own(key);
        struct release {
            session_cache* self;
            entry* e;
            std::string_view key;
            ~release() {
                respond_result r;
                self->drain(*e, key, {}, r);
            }
        } guard{this, e.get(), key};
        ensure_agent(*e, key);
        return f(*e->agent);
    }

private:
    struct entry {
        // What a janitor's scan reads comes first (about one cache line), then what an eviction checks and takes:
        // an entry is 136 bytes, and a pass over 10,000 of them waits on memory, not on instructions.
        std::string key;               // its conversation (the table's key; set once)
        std::atomic<std::int64_t> last_active{0};
        std::atomic<std::size_t> messages{0};
        std::atomic<std::size_t> bytes{0};
        std::size_t hash = 0;          // hash_of(key)
        detail::small_mutex m;         // guards everything but the atomics
        std::uint32_t waiters = 0;     // threads waiting on the shard's `idle` for this entry
        bool owned = false;            // a reply, a clear or with_agent holds the session
        bool evicted = false;
        bool told_queued = false;
        std::unique_ptr<Agent> agent;  // touched only by the owner (and the janitor, under m, when not owned)
        std::vector<user_input> pending;         // no allocation while empty (most sessions, most of the time)
        std::int64_t non_addressed = 0;
        std::stop_source stop{std::nostopstate}; // a fresh one per turn
        std::chrono::steady_clock::time_point last_arrival{};  // debounce only
    };
    using entry_lock = std::unique_lock<detail::small_mutex>;
    // A key is hashed once: the hash picks the shard and is the table's hash too.
    [[nodiscard]] static std::size_t hash_of(std::string_view key) noexcept { return std::hash<std::string_view>{}(key); }
    struct string_hash {  // the hibernated tools' map, looked up by view
        using is_transparent = void;
        std::size_t operator()(std::string_view s) const noexcept { return hash_of(s); }
    };
    static constexpr std::int64_t no_activity = std::numeric_limits<std::int64_t>::max();
    // Shared for a lookup (touch, find, a resident session's respond), exclusive for an insertion and a pass.
    using shard_mutex = detail::striped_mutex<8>;
    struct alignas(64) shard {  // cache lines of its own: two threads on two shards do not share one
        mutable shard_mutex m;
        detail::entry_table<entry> map;
        std::int64_t oldest = no_activity;    // a lower bound of its entries' last_active (see tick)
        std::int64_t inserted = no_activity;  // the oldest insertion since the last scan
        // Signalled when an entry of this shard with waiters is let go (or, debouncing, gets a message). One
        // per shard, not per entry: waiting is rare (a clear or with_agent behind a reply, a debounce), and a
        // condition variable in each entry would be 48 of its bytes and a destructor call per eviction.
        std::condition_variable_any idle;
    };
    shard& shard_of(const entry& e) noexcept { return shards_[e.hash % shard_count]; }
    /// Runs `wait(cv)` on the entry's shard's condition variable (the caller holds the entry's lock), counted in
    /// `e.waiters` meanwhile, so that whoever lets the entry go knows to signal.
    template <class Wait>
    void wait_on_shard(entry& e, Wait wait) {
        ++e.waiters;
        struct leave {
            entry& e;
            ~leave() { --e.waiters; }
        } guard{e};
        wait(shard_of(e).idle);
    }
    static constexpr std::size_t shard_count = 32;

    [[nodiscard]] std::int64_t now_ns() const {
        return std::chrono::duration_cast<std::chrono::nanoseconds>(clock_.now().time_since_epoch()).count();
    }
    void touch(entry& e) { e.last_active.store(now_ns(), std::memory_order_release); }

    static constexpr std::size_t prefetch_distance = 8;
    static constexpr std::size_t scan_ahead = 64;  // slots, at most half of them used
    static constexpr std::size_t destroy_ahead = 3;
    static void prefetch(const void* p) noexcept {
#if defined(__GNUC__) || defined(__clang__)
        __builtin_prefetch(p);
#else
        (void)p;
#endif
    }
    /// The lines of what a scan reads of an entry: its first fields (key, last_active, messages, bytes), which
    /// straddle two lines unless the entry starts one. Integer arithmetic: `e` is null for an empty slot.
    static void prefetch_scanned(const entry* e) noexcept {
        constexpr std::size_t scanned = sizeof(std::string) + sizeof(std::int64_t) + 2 * sizeof(std::size_t);
        const auto at = reinterpret_cast<std::uintptr_t>(e);
        prefetch(reinterpret_cast<const void*>(at));
        prefetch(reinterpret_cast<const void*>(at + scanned - 1));
    }
    /// Every cache line of *p (an agent's destructor, an eviction's checks read most of them), and of the
    /// `before` bytes ahead of it (the reference counts allocate_shared and the heap keep there).
    template <class T>
    static void prefetch_all(const T* p, std::size_t before = 0) noexcept {
        const auto first = (reinterpret_cast<std::uintptr_t>(p) - before) & ~std::uintptr_t{63};
        const auto last = reinterpret_cast<std::uintptr_t>(p) + sizeof(T) - 1;
        for (std::uintptr_t line = first; line <= last; line += 64) prefetch(reinterpret_cast<const void*>(line));
    }

    /// Under s's lock: evicts the session scanned at `i` if it is still the same entry, idle since the scan,
    /// not responding and with nothing queued. Its agent goes to `gone` (destroyed by the caller after the
    /// locks). The entry is alive: only a pass removes entries, and passes are serialised.
    bool evict_one(shard& s, std::size_t i, std::vector<std::shared_ptr<entry>>& dead, std::vector<std::unique_ptr<Agent>>& gone) {
        const auto why = static_cast<evict_reason>(chosen_[i] - 1);
        entry& e = *snapshot_[i];
        entry_lock el(e.m, std::try_to_lock);
        if (!el || e.owned || !e.pending.empty() || e.evicted || e.last_active.load(std::memory_order_acquire) != view_[i].last_active) {
            counters_.skipped_busy.fetch_add(1, std::memory_order_relaxed);
            return false;
        }
        std::shared_ptr<entry> held = s.map.take(&e, e.hash);  // compare-and-delete: this very entry
        if (!held) return false;
        e.evicted = true;
        if (opt_.hibernate && e.agent) hibernate(e.key, *e.agent);
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
        if (opt_.on_evicted) {
            dead.push_back(std::move(held));
            told_.emplace_back(dead.size() - 1, why);
        } else {
            held.reset();
        }
        return true;
    }


    std::shared_ptr<entry> find(std::string_view key) const {
        const std::size_t h = hash_of(key);
        const shard& s = shards_[h % shard_count];
        const shard_mutex::reader l(s.m);
        const auto* e = s.map.find(key, h);
        return e ? *e : nullptr;
    }
    std::shared_ptr<entry> get_or_create(std::string_view key) {
        const std::size_t h = hash_of(key);
        shard& s = shards_[h % shard_count];
        {  // a resident session (the common case) is found under a shared lock
            const shard_mutex::reader r(s.m);
            if (const auto* found = s.map.find(key, h)) return *found;
        }
        std::lock_guard l(s.m);
        if (const auto* found = s.map.find(key, h)) return *found;  // inserted meanwhile
        auto e = std::allocate_shared<entry>(detail::pool_allocator<entry>(entry_pool_));
        e->key.assign(key);
        e->hash = h;
        const std::int64_t now = now_ns();
        e->last_active.store(now, std::memory_order_relaxed);
        s.map.insert(h, e);
        s.oldest = std::min(s.oldest, now);
        s.inserted = std::min(s.inserted, now);
        counters_.created.fetch_add(1, std::memory_order_relaxed);
        return e;
    }
    /// Takes ownership of the session (after the reply in progress); the caller releases it with drain().
    std::shared_ptr<entry> own(std::string_view key) {
        while (true) {
            std::shared_ptr<entry> e = get_or_create(key);
            entry_lock l(e->m);
            wait_on_shard(*e, [&](auto& cv) { cv.wait(l, [&] { return !e->owned; }); });
            if (e->evicted) continue;  // evicted while we waited: a new entry
            e->owned = true;
            return e;
        }
    }

    void ensure_agent(entry& e, std::string_view key) {
        if (e.agent) return;
        e.agent = make_(std::string(key));
        if (!e.agent) throw error(errc::invalid_argument, "session_cache: the factory returned no agent for " + std::string(key));
        if (opt_.hibernate) wake(key, *e.agent);
    }

    static constexpr bool can_hibernate = requires(Agent& a) {
        a.tools().session_tools();
        a.add_tool(std::declval<tool>());
    };

    void hibernate(const std::string& key, Agent& a) {
        if constexpr (can_hibernate) {
            const auto tools = a.tools().session_tools();
            if (tools.empty() || opt_.max_hibernated == 0) return;
            std::lock_guard l(hibernate_mutex_);
            hibernated_entry& h = hibernated_[key];
            h.tools.assign(tools.begin(), tools.end());
            h.generation = ++hibernate_generation_;
            hibernate_order_.emplace_back(key, h.generation);
            // The oldest go past the cap; an order record whose session woke or hibernated again since is
            // stale and skipped, so the order holds at most about twice the records.
            while (!hibernate_order_.empty() &&
                   (hibernated_.size() > opt_.max_hibernated || hibernate_order_.size() > 2 * hibernated_.size() + 16)) {
                const auto& [k, g] = hibernate_order_.front();
                if (const auto it = hibernated_.find(k); it != hibernated_.end() && it->second.generation == g) hibernated_.erase(it);
                hibernate_order_.pop_front();
            }
        }
    }
    void wake(std::string_view key, Agent& a) {
        if constexpr (can_hibernate) {
            std::vector<tool> tools;
            {
                std::lock_guard l(hibernate_mutex_);
                const auto it = hibernated_.find(key);
                if (it == hibernated_.end()) return;
                tools = std::move(it->second.tools);
                hibernated_.erase(it);
            }
            for (tool& t : tools) a.add_tool(std::move(t));
        }
    }
    void forget_hibernated(std::string_view key) {
        if (!opt_.hibernate) return;
        std::lock_guard l(hibernate_mutex_);
        if (const auto it = hibernated_.find(key); it != hibernated_.end()) hibernated_.erase(it);
    }

    /// The owner's clear: window and store through the agent, then the agent itself (its run-time tools).
    void clear_owned(entry& e, std::string_view key) {
        try {
            ensure_agent(e, key);
            e.agent->clear();
            e.agent.reset();
        } catch (const std::exception& ex) {
            log_to(opt_.log, log_level::error, "session_cache: clearing " + std::string(key) + " failed: " + ex.what());
        }
        e.messages.store(0, std::memory_order_relaxed);
        e.bytes.store(0, std::memory_order_relaxed);
        forget_hibernated(key);
        counters_.cleared.fetch_add(1, std::memory_order_relaxed);
        notify_evicted(key, evict_reason::cleared);
    }

    /// Runs the queued messages as turns, then lets go of the session. The queue is checked and ownership
    /// released under the same lock, so a message queued at any moment is either seen here or finds the
    /// session free.
    void drain(entry& e, std::string_view key, const chat_options& copt, respond_result& r) {
        entry_lock l(e.m);
        bool leased = false;
        while (!e.pending.empty()) {
            if (opt_.lease.acquire && !leased) {
                l.unlock();
                leased = take_lease(e, key);
                l.lock();
                if (!leased) {  // another process answers this session: hand everything queued over, atomically
                    r.status = respond_status::elsewhere;
                    for (user_input& in : e.pending) r.handed_over.push_back(std::move(in));
                    e.pending.clear();
                    e.told_queued = false;
                    break;
                }
            }
            if (opt_.debounce.count() > 0) {  // wait until the user has stopped typing (or debounce_max)
                const auto cap = std::chrono::steady_clock::now() + opt_.debounce_max;
                while (!e.pending.empty()) {
                    const auto quiet = std::min(cap, e.last_arrival + opt_.debounce);
                    if (std::chrono::steady_clock::now() >= quiet) break;
                    wait_on_shard(e, [&](auto& cv) { cv.wait_until(l, quiet); });
                }
                if (e.pending.empty()) break;  // a /stop emptied the queue meanwhile
            }
            std::vector<user_input> batch;
            if (opt_.when_busy == busy_policy::one_per_message && e.pending.size() > 1) {
                batch.push_back(std::move(e.pending.front()));
                e.pending.erase(e.pending.begin());
            } else {
                batch.swap(e.pending);
            }
            e.told_queued = false;
            e.stop = std::stop_source();
            const std::stop_token token = e.stop.get_token();
            l.unlock();
            try {
                ensure_agent(e, key);
                admission slot(*this);
                chat_options turn_options = copt;
                if (opt_.when_busy == busy_policy::steer)
                    turn_options.steer = [&e] {
                        std::lock_guard sl(e.m);
                        std::vector<user_input> more;
                        more.swap(e.pending);
                        e.told_queued = false;
                        return more;
                    };
                chat_result c = e.agent->chat(merge(std::move(batch)), turn_options, token);
                e.messages.store(e.agent->window().size(), std::memory_order_relaxed);
                e.bytes.store(e.agent->window().resident_bytes(), std::memory_order_relaxed);
                touch(e);
                if (opt_.on_reply) {
                    try {
                        opt_.on_reply(key, c);
                    } catch (const std::exception& ex) {
                        log_to(opt_.log, log_level::warn, std::string("session_cache: on_reply threw: ") + ex.what());
                    }
                }
                r.turns.push_back(std::move(c));
            } catch (...) {  // the factory failed (or worse): the turn fails, the session stays usable
                chat_result c;
                c.end = turn_end::failed;
                c.error = "session_cache: " + describe_current_exception();
                log_to(opt_.log, log_level::error, c.error);
                r.turns.push_back(std::move(c));
            }
            probe(key, handoff_point::turn_done);
            l.lock();
            if (leased && e.pending.empty()) {  // give the lease back while still owning the session
                l.unlock();
                give_lease(e, key);
                leased = false;
                l.lock();  // a message that came meanwhile takes the lease again (loop)
            }
        }
        e.owned = false;
        const bool waited_for = e.waiters > 0;
        l.unlock();
        if (waited_for) shard_of(e).idle.notify_all();
        probe(key, handoff_point::released);
    }

    /// Takes the session's lease (retrying for lease.wait). A lease taken afresh means another process may have
    /// answered meanwhile: the resident agent is dropped, to be rebuilt from the store.
    bool take_lease(entry& e, std::string_view key) {
        const auto until = std::chrono::steady_clock::now() + opt_.lease.wait;
        while (true) {
            bool fresh = false;
            bool ok = false;
            try {
                ok = opt_.lease.acquire(key, fresh);
            } catch (const std::exception& ex) {
                log_to(opt_.log, log_level::error, "session_cache: taking the lease of " + std::string(key) + " failed: " + ex.what());
            }
            if (ok) {
                if (fresh && e.agent) e.agent.reset();
                return true;
            }
            if (std::chrono::steady_clock::now() >= until) return false;
            std::this_thread::sleep_for(std::chrono::milliseconds(20));
        }
    }
    /// Flushes the session's writes (they are fenced by the lease) and gives the lease back.
    void give_lease(entry& e, std::string_view key) {
        try {
            if (e.agent) e.agent->writer().flush();
            opt_.lease.release(key);
        } catch (const std::exception& ex) {
            log_to(opt_.log, log_level::error, "session_cache: releasing the lease of " + std::string(key) + " failed: " + ex.what());
        }
    }

    void probe(std::string_view key, handoff_point at) {
        if (!opt_.on_handoff) return;
        try {
            opt_.on_handoff(key, at);
        } catch (...) {  // tracing must not break a session
        }
    }

    [[nodiscard]] static std::string describe_current_exception() {
        try {
            throw;
        } catch (const std::exception& ex) {
            return ex.what();
        } catch (...) {
            return "unknown exception";
        }
    }

    /// A slot of max_concurrent_replies for the duration of one turn (nothing when there is no limit).
    struct admission {
        session_cache& c;
        explicit admission(session_cache& cache) : c(cache) {
            if (c.opt_.max_concurrent_replies > 0) c.slots_.acquire();
        }
        ~admission() {
            if (c.opt_.max_concurrent_replies > 0) c.slots_.release();
        }
        admission(const admission&) = delete;
        admission& operator=(const admission&) = delete;
    };

    /// Messages queued behind a reply become one turn: their texts in arrival order, one per line, and all
    /// their images.
    [[nodiscard]] static user_input merge(std::vector<user_input> batch) {
        if (batch.size() == 1) return std::move(batch.front());
        user_input out(std::string{});
        for (user_input& in : batch) {
            if (!out.text.empty() && !in.text.empty()) out.text.push_back('\n');
            out.text += in.text;
            for (std::string& img : in.images) out.images.push_back(std::move(img));
        }
        return out;
    }

    void notify_evicted(std::string_view key, evict_reason why) {
        if (!opt_.on_evicted) return;
        try {
            opt_.on_evicted(key, why);
        } catch (const std::exception& ex) {
            log_to(opt_.log, log_level::warn, std::string("session_cache: on_evicted threw: ") + ex.what());
        }
    }

    void run_janitor() {
        std::unique_lock l(janitor_mutex_);
        while (!stopping_) {
            if (janitor_wake_.wait_for(l, opt_.tick, [&] { return stopping_; })) break;
            l.unlock();
            try {
                tick();
            } catch (const std::exception& ex) {
                log_to(opt_.log, log_level::error, std::string("session_cache: janitor tick failed: ") + ex.what());
            }
            l.lock();
        }
    }

    factory_type make_;
    session_options opt_;
    Clock clock_;
    Eviction policy_;
    std::counting_semaphore<> slots_;
    detail::block_pool entry_pool_;  // before the shards: their entries go back to it
    shard shards_[shard_count];
    struct {
        std::atomic<std::uint64_t> created{0}, evicted_idle{0}, evicted_lru{0}, cleared{0}, skipped_busy{0}, dropped_pending{0};
    } counters_;
    std::mutex tick_mutex_;  // one pass at a time; its scratch is reused
    std::int64_t last_tick_now_ = std::numeric_limits<std::int64_t>::min();
    std::vector<entry*> snapshot_;  // alive until this pass removes them (only a pass removes entries)
    std::vector<resident_session> view_;
    std::vector<eviction_choice> choices_;
    std::size_t range_[shard_count + 1] = {};
    std::vector<std::uint8_t> chosen_;  // per scanned session: 0, the reason + 1
    std::vector<std::unique_ptr<Agent>> gone_, gone_scratch_;
    std::vector<std::shared_ptr<entry>> dead_;
    std::vector<std::pair<std::size_t, evict_reason>> told_;  // (index into the tick's dead_, why)
    mutable std::mutex hibernate_mutex_;
    struct hibernated_entry {
        std::vector<tool> tools;
        std::uint64_t generation = 0;
    };
    std::unordered_map<std::string, hibernated_entry, string_hash, std::equal_to<>> hibernated_;
    std::deque<std::pair<std::string, std::uint64_t>> hibernate_order_;  // (key, generation), oldest first
    std::uint64_t hibernate_generation_ = 0;
    std::mutex janitor_mutex_;
    std::condition_variable janitor_wake_;
    bool stopping_ = false;
    std::thread janitor_;  // last: starts after every other member exists
};

} // namespace ania
