// ania/detail/small_mutex.hpp -- a four-byte mutex for objects that exist by the ten thousand.
// SPDX-License-Identifier: MIT
#pragma once

#include <atomic>
#include <cstdint>

namespace ania::detail {

/// A mutex in one 32-bit word (std::mutex is 40 bytes on Linux, and a call into libpthread for each lock and
/// unlock). A session cache holds one per session; its janitor try-locks thousands of them in one pass, and the
/// entries' size is what that pass waits on memory for. The classic three-state futex lock ("Futexes Are
/// Tricky", U. Drepper: 0 free, 1 held, 2 held and maybe waited for) over C++20's atomic wait/notify: the
/// uncontended lock and unlock are one atomic instruction each, inline; the owner wakes a waiter only when one
/// may be waiting. Not recursive; meets Lockable (lock_guard, unique_lock, condition_variable_any).
class small_mutex {
public:
    small_mutex() noexcept = default;
    small_mutex(const small_mutex&) = delete;
    small_mutex& operator=(const small_mutex&) = delete;

    void lock() noexcept {
        std::uint32_t seen = free;
        if (state_.compare_exchange_strong(seen, held, std::memory_order_acquire, std::memory_order_relaxed)) return;
        lock_contended(seen);
    }
    [[nodiscard]] bool try_lock() noexcept {
        std::uint32_t seen = free;
        return state_.compare_exchange_strong(seen, held, std::memory_order_acquire, std::memory_order_relaxed);
    }
    void unlock() noexcept {
        if (state_.exchange(free, std::memory_order_release) == contended) state_.notify_one();
    }

private:
    static constexpr std::uint32_t free = 0, held = 1, contended = 2;

    void lock_contended(std::uint32_t seen) noexcept {
        // A short spin first: a session's lock is held for microseconds (a janitor's check, a queue push),
        // except while its agent answers, where sleeping is right.
        for (int spin = 0; spin < 64 && seen == held; ++spin) {
#if defined(__x86_64__) || defined(__i386__)
            __builtin_ia32_pause();
#endif
            seen = state_.load(std::memory_order_relaxed);
            if (seen == free && state_.compare_exchange_weak(seen, held, std::memory_order_acquire, std::memory_order_relaxed))
                return;
        }
        // From here on the word says "contended", so whoever unlocks wakes one sleeper; taking the lock this way
        // leaves it contended too (a second sleeper may remain), at the price of one spare wake-up.
        if (seen != contended) seen = state_.exchange(contended, std::memory_order_acquire);
        while (seen != free) {
            state_.wait(contended, std::memory_order_relaxed);
            seen = state_.exchange(contended, std::memory_order_acquire);
        }
    }

    std::atomic<std::uint32_t> state_{free};
};

} // namespace ania::detail
