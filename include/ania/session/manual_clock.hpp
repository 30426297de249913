// ania/session/manual_clock.hpp -- a clock that moves only when told: deterministic tests of eviction.
// SPDX-License-Identifier: MIT
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <memory>

namespace ania {

/// Models agent_clock. Copies share their time; `advance` and `now` may be called from any thread.
class manual_clock {
public:
    using duration = std::chrono::nanoseconds;
    using time_point = std::chrono::time_point<std::chrono::steady_clock, duration>;

    [[nodiscard]] time_point now() const noexcept { return time_point(duration(ns_->load(std::memory_order_acquire))); }
    void advance(duration d) noexcept { ns_->fetch_add(d.count(), std::memory_order_acq_rel); }
    void set(duration since_epoch) noexcept { ns_->store(since_epoch.count(), std::memory_order_release); }

private:
    std::shared_ptr<std::atomic<std::int64_t>> ns_ = std::make_shared<std::atomic<std::int64_t>>(0);
};

} // namespace ania
