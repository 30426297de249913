// ania/agent/clock.hpp -- the default clock of an agent (a turn's duration) and of a session cache (idle
// eviction): std::chrono::steady_clock as a policy object. Tests use ania::manual_clock (session/manual_clock.hpp).
// SPDX-License-Identifier: MIT
#pragma once

#include <chrono>

namespace ania {

/// The default clock: std::chrono::steady_clock as a policy object.
struct steady_clock_policy {
    using duration = std::chrono::steady_clock::duration;
    using time_point = std::chrono::steady_clock::time_point;
    [[nodiscard]] time_point now() const noexcept { return std::chrono::steady_clock::now(); }
};

} // namespace ania
