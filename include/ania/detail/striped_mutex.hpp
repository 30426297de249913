// ania/detail/striped_mutex.hpp -- a reader/writer lock whose readers do not share a cache line.
// SPDX-License-Identifier: MIT
#pragma once

#include <atomic>
#include <cstddef>

#include <ania/detail/small_mutex.hpp>

namespace ania::detail {

/// A lock taken shared by many threads for a few nanoseconds each (a lookup) and exclusively by few (an
/// insertion, an eviction pass). Each thread reads through a stripe of its own (a small_mutex on its own cache
/// line); a writer takes every stripe, in order. A shared lock then writes only a line no other thread of the
/// process uses (up to `Stripes` threads), where one lock word taken by every reader would travel between the
/// cores on each lookup: two threads touching sessions measured 36 ns a touch with one word, 17 with stripes.
/// The price is the writer's: `Stripes` lock and unlock operations, and `Stripes` cache lines of memory.
/// Lockable (lock / try_lock / unlock, for lock_guard) and SharedLockable's lock_shared / unlock_shared, which
/// must be called on the same thread. Not recursive; a reader must not take it again, shared or not.
template <std::size_t Stripes = 8>
class striped_mutex {
    static_assert(Stripes > 0);

public:
    striped_mutex() noexcept = default;
    striped_mutex(const striped_mutex&) = delete;
    striped_mutex& operator=(const striped_mutex&) = delete;

    void lock() noexcept {
        for (stripe& s : stripes_) s.m.lock();
    }
    [[nodiscard]] bool try_lock() noexcept {
        for (std::size_t i = 0; i < Stripes; ++i) {
            if (stripes_[i].m.try_lock()) continue;
            while (i > 0) stripes_[--i].m.unlock();
            return false;
        }
        return true;
    }
    void unlock() noexcept {
        for (std::size_t i = Stripes; i > 0; --i) stripes_[i - 1].m.unlock();
    }

    void lock_shared() noexcept { stripes_[own_stripe()].m.lock(); }
    void unlock_shared() noexcept { stripes_[own_stripe()].m.unlock(); }

    /// A scoped shared lock (std::shared_lock without <shared_mutex>, which a header here should not parse).
    class [[nodiscard]] reader {
    public:
        explicit reader(striped_mutex& m) noexcept : m_(m) { m_.lock_shared(); }
        reader(const reader&) = delete;
        reader& operator=(const reader&) = delete;
        ~reader() { m_.unlock_shared(); }

    private:
        striped_mutex& m_;
    };

    /// The stripe this thread reads through: threads are numbered as they first ask, so the first `Stripes`
    /// threads (a bot's worker pool, typically) each have one of their own.
    [[nodiscard]] static std::size_t own_stripe() noexcept {
        static std::atomic<std::size_t> next{0};
        thread_local const std::size_t mine = next.fetch_add(1, std::memory_order_relaxed) % Stripes;
        return mine;
    }

private:
    struct alignas(64) stripe {
        small_mutex m;
    };
    stripe stripes_[Stripes];
};

} // namespace ania::detail
