// ania/session/resident.hpp -- what an eviction policy sees of the resident sessions and what it chooses; the limits of SPEC §3.
// SPDX-License-Identifier: MIT
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <string_view>

#include <ania/defaults.hpp>

namespace ania {

/// Why a session left the cache.
enum class evict_reason : std::uint8_t {
    idle,     ///< idle longer than session.max_idle_minutes
    lru,      ///< more than session.max_sessions resident: the least recently active went
    cleared,  ///< group auto-clear (session.group_auto_clear) or an explicit clear
    manual,   ///< session_cache::evict (an operator, the admin console)
};

[[nodiscard]] constexpr std::string_view to_string(evict_reason r) noexcept {
    switch (r) {
    case evict_reason::idle: return "idle";
    case evict_reason::lru: return "lru";
    case evict_reason::cleared: return "cleared";
    case evict_reason::manual: return "manual";
    }
    return "idle";
}

/// What an eviction policy sees of one resident session at a tick. `last_active` counts the cache clock's
/// ticks (nanoseconds); only interactions addressed to the AI move it.
struct resident_session {
    std::string_view key;
    std::int64_t last_active;
    std::size_t messages;  ///< in the session's window (0 when its agent is not built yet)
    std::size_t bytes = 0; ///< about what its window holds in RAM (token_window::resident_bytes)
};

/// One choice of a policy: the index into the span it was given, and why.
struct eviction_choice {
    std::size_t index;
    evict_reason why;
};

/// The limits of SPEC §3, as the session cache and its eviction policies read them.
struct session_limits {
    std::chrono::nanoseconds max_idle = std::chrono::minutes(defaults::session_max_idle_minutes);  ///< 0 disables
    std::size_t max_sessions = static_cast<std::size_t>(defaults::session_max_sessions);          ///< 0 disables
};

} // namespace ania
