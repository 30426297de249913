// ania/memory/backfill.hpp -- a background thread that gives vectors to memories saved without one.
// SPDX-License-Identifier: MIT
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <mutex>
#include <stop_token>
#include <thread>

namespace ania::memory {

/// Every `interval`, embeds at most `per_round` entries that lack a vector (saved while the embedder was
/// absent or failing): a rate limit, so that a backlog never floods the embedding service. Stops and joins
/// on destruction. `Manager` is a memory_manager; it must outlive this object.
template <class Manager>
class embedding_backfill {
public:
    explicit embedding_backfill(Manager& m, std::chrono::milliseconds interval = std::chrono::seconds(10), std::size_t per_round = 8)
        : m_(m), interval_(interval), per_round_(per_round), worker_([this](std::stop_token st) { run(st); }) {}

    embedding_backfill(const embedding_backfill&) = delete;
    embedding_backfill& operator=(const embedding_backfill&) = delete;
    ~embedding_backfill() {
        worker_.request_stop();
        wake_.notify_all();
    }

    /// Entries embedded so far, and rounds run.
    [[nodiscard]] std::size_t embedded() const noexcept { return embedded_.load(); }
    [[nodiscard]] std::size_t rounds() const noexcept { return rounds_.load(); }

private:
    void run(std::stop_token st) {
        std::mutex m;
        while (!st.stop_requested()) {
            embedded_ += m_.backfill(per_round_);
            ++rounds_;
            std::unique_lock lock(m);
            wake_.wait_for(lock, st, interval_, [] { return false; });
        }
    }

    Manager& m_;
    std::chrono::milliseconds interval_;
    std::size_t per_round_;
    std::atomic<std::size_t> embedded_{0}, rounds_{0};
    std::condition_variable_any wake_;
    std::jthread worker_;  // last: starts after every other member exists
};

} // namespace ania::memory
