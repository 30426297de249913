// ania/compressor/summary_breaker.hpp -- stop paying for summaries while the summarising model keeps failing.
// SPDX-License-Identifier: MIT
#pragma once

#include <chrono>
#include <cstddef>
#include <functional>
#include <mutex>
#include <utility>

namespace ania {

/// A circuit breaker for llm_summary (summary_options::breaker): after `failures_to_open` failed summaries in a
/// row (a failed call, a timeout, a summary the checks rejected) it opens, and for `cool_down` llm_summary fails
/// at once without calling the model, so the ladder's next rung (truncation) runs instead of a timeout per
/// turn. After the cool-down one trial call is let through (half-open): a success closes the breaker, a failure
/// opens it for another cool-down. Shared by every session's compressor (the network is down for all of them);
/// thread-safe. The clock is injectable for tests.
class summary_breaker {
public:
    using clock = std::chrono::steady_clock;
    using now_fn = std::function<clock::time_point()>;

    explicit summary_breaker(std::size_t failures_to_open = 3, std::chrono::milliseconds cool_down = std::chrono::seconds(60),
                             now_fn now = {})
        : failures_to_open_(failures_to_open == 0 ? 1 : failures_to_open), cool_down_(cool_down), now_(std::move(now)) {}

    /// True when a summary may be attempted now. While open and cooling down: false. After the cool-down the
    /// first caller gets true (the trial) and the others false until the trial is recorded.
    [[nodiscard]] bool allow() {
        std::lock_guard lock(mu_);
        if (!open_) return true;
        if (trial_ || time() < open_until_) return false;
        trial_ = true;
        return true;
    }
    /// The outcome of an attempt allow() let through.
    void record(bool ok) {
        std::lock_guard lock(mu_);
        trial_ = false;
        if (ok) {
            failures_ = 0;
            open_ = false;
            return;
        }
        if (++failures_ >= failures_to_open_ || open_) {
            open_ = true;
            open_until_ = time() + cool_down_;
            ++openings_;
        }
    }

    [[nodiscard]] bool is_open() const {
        std::lock_guard lock(mu_);
        return open_;
    }
    [[nodiscard]] std::size_t consecutive_failures() const {
        std::lock_guard lock(mu_);
        return failures_;
    }
    /// How many times it opened (a reopening after a failed trial counts).
    [[nodiscard]] std::size_t openings() const {
        std::lock_guard lock(mu_);
        return openings_;
    }
    /// Time left before the next trial (zero when closed or due).
    [[nodiscard]] std::chrono::milliseconds retry_in() const {
        std::lock_guard lock(mu_);
        if (!open_) return std::chrono::milliseconds(0);
        const auto left = open_until_ - time();
        return left.count() > 0 ? std::chrono::duration_cast<std::chrono::milliseconds>(left) : std::chrono::milliseconds(0);
    }

private:
    [[nodiscard]] clock::time_point time() const { return now_ ? now_() : clock::now(); }

    mutable std::mutex mu_;
    std::size_t failures_to_open_;
    std::chrono::milliseconds cool_down_;
    now_fn now_;
    std::size_t failures_ = 0, openings_ = 0;
    bool open_ = false, trial_ = false;
    clock::time_point open_until_{};
};

} // namespace ania
