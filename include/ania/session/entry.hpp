// ania/session/entry.hpp -- one resident session of a session_cache (its agent, queue, counters, stop
// handle: everything an eviction or a clear frees at once) and the shard that holds it. Not API.
// SPDX-License-Identifier: MIT
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <limits>
#include <memory>
#include <stop_token>
#include <string>
#include <string_view>
#include <vector>

#include <ania/agent/chat.hpp>
#include <ania/detail/small_mutex.hpp>
#include <ania/detail/striped_mutex.hpp>
#include <ania/session/entry_table.hpp>

namespace ania::detail {

inline constexpr std::int64_t no_activity = std::numeric_limits<std::int64_t>::max();
inline constexpr std::size_t session_shard_count = 32;

/// A key is hashed once: the hash picks the shard and is the table's hash too.
[[nodiscard]] inline std::size_t session_hash(std::string_view key) noexcept { return std::hash<std::string_view>{}(key); }

template <class Agent>
struct session_entry {
    // What a janitor's scan reads comes first (about one cache line), then what an eviction checks and takes:
    // an entry is 136 bytes, and a pass over 10,000 of them waits on memory, not on instructions.
    std::string key;               // its conversation (the table's key; set once)
    std::atomic<std::int64_t> last_active{0};
    std::atomic<std::size_t> messages{0};
    std::atomic<std::size_t> bytes{0};
    std::size_t hash = 0;          // session_hash(key)
    small_mutex m;                 // guards everything but the atomics
    std::uint32_t waiters = 0;     // threads waiting on the shard's `idle` for this entry
    bool owned = false;            // a reply, a clear or with_agent holds the session
    bool evicted = false;
    bool told_queued = false;
    std::unique_ptr<Agent> agent;  // touched only by the owner (and the janitor, under m, when not owned)
    std::vector<user_input> pending;         // no allocation while empty (most sessions, most of the time)
    std::int64_t non_addressed = 0;
    std::stop_source stop{std::nostopstate}; // a fresh one per turn
    // For snapshot() (an operator's view), written after each turn: not on the janitor's path.
    std::atomic<std::int64_t> tokens{0};
    std::atomic<std::int64_t> last_compression{no_activity};
    std::chrono::steady_clock::time_point last_arrival{};  // debounce only
};
using session_entry_lock = std::unique_lock<small_mutex>;

// Shared for a lookup (touch, find, a resident session's respond), exclusive for an insertion and a pass.
using shard_mutex = striped_mutex<8>;

template <class Entry>
struct alignas(64) session_shard {  // cache lines of its own: two threads on two shards do not share one
    mutable shard_mutex m;
    entry_table<Entry> map;
    std::int64_t oldest = no_activity;    // a lower bound of its entries' last_active (see tick)
    std::int64_t inserted = no_activity;  // the oldest insertion since the last scan
    // Signalled when an entry of this shard with waiters is let go (or, debouncing, gets a message). One
    // per shard, not per entry: waiting is rare (a clear or with_agent behind a reply, a debounce), and a
    // condition variable in each entry would be 48 of its bytes and a destructor call per eviction.
    std::condition_variable_any idle;
};

/// Runs `wait(cv)` on the shard's condition variable (the caller holds the entry's lock), counted in `e.waiters`
/// meanwhile, so that whoever lets the entry go knows to signal.
template <class Entry, class Wait>
void wait_on_shard(session_shard<Entry>& s, Entry& e, Wait wait) {
    ++e.waiters;
    struct leave {
        Entry& e;
        ~leave() { --e.waiters; }
    } guard{e};
    wait(s.idle);
}

inline void prefetch(const void* p) noexcept {
#if defined(__GNUC__) || defined(__clang__)
    __builtin_prefetch(p);
#else
    (void)p;
#endif
}
/// Every cache line of *p (an agent's destructor, an eviction's checks read most of them), and of the
/// `before` bytes ahead of it (the reference counts allocate_shared and the heap keep there).
template <class T>
void prefetch_all(const T* p, std::size_t before = 0) noexcept {
    const auto first = (reinterpret_cast<std::uintptr_t>(p) - before) & ~std::uintptr_t{63};
    const auto last = reinterpret_cast<std::uintptr_t>(p) + sizeof(T) - 1;
    for (std::uintptr_t line = first; line <= last; line += 64) prefetch(reinterpret_cast<const void*>(line));
}

} // namespace ania::detail
