// ania/session/block_pool.hpp -- freed blocks of one size kept for reuse, given back to the heap a tick later.
// SPDX-License-Identifier: MIT
#pragma once

#include <algorithm>
#include <cstddef>
#include <mutex>
#include <new>
#include <vector>

#include <ania/detail/small_mutex.hpp>

// Under AddressSanitizer a pooled block is poisoned, so a use of a freed entry is still reported.
#if defined(__SANITIZE_ADDRESS__)
#define ANIA_POOL_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define ANIA_POOL_ASAN 1
#endif
#endif
#ifdef ANIA_POOL_ASAN
#include <sanitizer/asan_interface.h>
#define ANIA_POOL_POISON(p, n) ASAN_POISON_MEMORY_REGION(p, n)
#define ANIA_POOL_UNPOISON(p, n) ASAN_UNPOISON_MEMORY_REGION(p, n)
#undef ANIA_POOL_ASAN
#else
#define ANIA_POOL_POISON(p, n) ((void)(p), (void)(n))
#define ANIA_POOL_UNPOISON(p, n) ((void)(p), (void)(n))
#endif

namespace ania::detail {

/// A session cache frees thousands of entries in one janitor pass and makes as many again when users come
/// back. glibc frees each ~300-byte block by coalescing it with its neighbours (cache misses in scattered
/// memory); here a freed block is pushed on a stack instead, and the next entry made pops it. A block that
/// stayed on the stack for a whole janitor period (from one `settle()` to the next `trim()`) goes back to the
/// heap, so memory still follows the resident count, one tick late. Blocks of another size than the first
/// (none in practice) go to the heap directly. Thread-safe: entries are freed by whichever thread drops the
/// last reference.
class block_pool {
public:
    block_pool() = default;
    block_pool(const block_pool&) = delete;
    block_pool& operator=(const block_pool&) = delete;
    ~block_pool() {
        for (void* p : free_) release(p);
    }

    [[nodiscard]] void* allocate(std::size_t size, std::size_t align) {
        {
            std::lock_guard l(m_);
            if (size_ == 0) size_ = size, align_ = std::align_val_t{align};
            if (size == size_ && std::align_val_t{align} == align_ && !free_.empty()) {
                void* p = free_.back();
                free_.pop_back();
                settled_ = std::min(settled_, free_.size());
                ANIA_POOL_UNPOISON(p, size_);
                return p;
            }
        }
        return ::operator new(size, std::align_val_t{align});
    }
    void deallocate(void* p, std::size_t size, std::size_t align) noexcept {
        {
            std::lock_guard l(m_);
            if (size == size_ && std::align_val_t{align} == align_) {
                try {
                    free_.push_back(p);
                    ANIA_POOL_POISON(p, size_);
                    return;
                } catch (...) {  // no room to remember it: the heap takes it
                }
            }
        }
        ::operator delete(p, std::align_val_t{align});
    }

    /// Gives back to the heap the blocks that were not reused since the last settle(): the bottom of the
    /// stack, which no allocation reached meanwhile.
    void trim() noexcept {
        std::vector<void*> idle;
        {
            std::lock_guard l(m_);
            const std::size_t n = std::min(settled_, free_.size());
            if (n == 0) return;
            const auto bottom = free_.begin() + static_cast<std::ptrdiff_t>(n);
            try {  // freed outside the lock, so that making entries meanwhile does not wait
                idle.assign(free_.begin(), bottom);
            } catch (...) {  // no room for the list: freed here
                for (auto it = free_.begin(); it != bottom; ++it) release(*it);
            }
            free_.erase(free_.begin(), bottom);
            settled_ = 0;
        }
        for (void* p : idle) release(p);
    }
    /// Marks every block now on the stack: those still there at the next trim() go back to the heap.
    void settle() noexcept {
        std::lock_guard l(m_);
        settled_ = free_.size();
    }
    [[nodiscard]] std::size_t idle_blocks() const {
        std::lock_guard l(m_);
        return free_.size();
    }

private:
    void release(void* p) const noexcept {  // a pooled block back to the heap
        ANIA_POOL_UNPOISON(p, size_);
        ::operator delete(p, align_);
    }

    mutable small_mutex m_;  // a pass frees thousands of entries: an inline lock each, not a call into libpthread
    std::vector<void*> free_;   // a stack: the most recently freed on top
    std::size_t settled_ = 0;   // the bottom blocks no allocation has reached since settle()
    std::size_t size_ = 0;
    std::align_val_t align_{alignof(std::max_align_t)};
};

/// The allocator allocate_shared uses to put an entry (and its reference counts) in a block of the pool.
template <class T>
struct pool_allocator {
    using value_type = T;
    block_pool* pool;
    explicit pool_allocator(block_pool& p) noexcept : pool(&p) {}
    template <class U>
    pool_allocator(const pool_allocator<U>& o) noexcept : pool(o.pool) {}  // NOLINT: rebinding
    [[nodiscard]] T* allocate(std::size_t n) {
        if (n != 1) return static_cast<T*>(::operator new(n * sizeof(T), std::align_val_t{alignof(T)}));
        return static_cast<T*>(pool->allocate(sizeof(T), alignof(T)));
    }
    void deallocate(T* p, std::size_t n) noexcept {
        if (n != 1) return ::operator delete(p, std::align_val_t{alignof(T)});
        pool->deallocate(p, sizeof(T), alignof(T));
    }
    template <class U>
    friend bool operator==(const pool_allocator& a, const pool_allocator<U>& b) noexcept { return a.pool == b.pool; }
};

} // namespace ania::detail

#undef ANIA_POOL_POISON
#undef ANIA_POOL_UNPOISON
