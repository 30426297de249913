// ania/memory/backfill.hpp -- a background thread that gives vectors to memories saved without one.
// SPDX-License-Identifier: MIT
#pragma once

#include <atomic>
#include <chrono>
#include <cstddef>

#include <ania/detail/worker.hpp>

namespace ania::memory {

/// Every `interval`, embeds at most `per_round` entries that lack a vector (saved while the embedder was
/// absent or failing): a rate limit, so that a backlog never floods the embedding service. Stops and joins
/// on destruction. `Manager` is a memory_manager; it must outlive this object.
template <class Manager>
class embedding_backfill {
public:
    explicit embedding_backfill(Manager& m, std::chrono::milliseconds interval = std::chrono::seconds(10), std::size_t per_round = 8)
        : m_(m), per_round_(per_round) {
        worker_.start(interval, [this] { round(); }, /*call_first=*/true);
    }

    embedding_backfill(const embedding_backfill&) = delete;
    embedding_backfill& operator=(const embedding_backfill&) = delete;

    /// Entries embedded so far, and rounds run.
    [[nodiscard]] std::size_t embedded() const noexcept { return embedded_.load(); }
    [[nodiscard]] std::size_t rounds() const noexcept { return rounds_.load(); }

private:
    void round() noexcept {
        try {
            embedded_ += m_.backfill(per_round_);  // an embedder that fails leaves the entries for the next round
        } catch (...) {                             // a backend that fails too: the next round tries again
        }
        ++rounds_;
    }

    Manager& m_;
    std::size_t per_round_;
    std::atomic<std::size_t> embedded_{0}, rounds_{0};
    ania::detail::periodic_worker worker_;  // last: stops (and joins) first
};

} // namespace ania::memory
