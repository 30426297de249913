// ania/session/results.hpp -- what a session cache's respond() did, and its counters.
// SPDX-License-Identifier: MIT
#pragma once

#include <atomic>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <ania/agent/chat.hpp>

namespace ania {

/// What `respond` did with a message.
enum class respond_status : std::uint8_t {
    replied,  ///< this call ran the turn (and any messages queued meanwhile: `turns`)
    queued,   ///< the session is responding: the message waits for its next turn
    ignored,  ///< not addressed to the bot: counted for auto-clear, nothing else
    cleared,  ///< not addressed, and the run reached group_auto_clear: the session was cleared
    rejected, ///< the session is responding and busy_policy::reject refused the message
    elsewhere, ///< another process holds the session's lease: the messages are in `handed_over`, unanswered
};

struct respond_result {
    respond_status status = respond_status::ignored;
    std::vector<chat_result> turns;  ///< the turns this call ran, in order
    bool tell_queued = false;        ///< queued, and the first message queued behind this reply: tell the user once
    std::size_t dropped = 0;         ///< messages this submission pushed out of a full queue
    std::vector<user_input> handed_over{};  ///< elsewhere: this message and any queued behind it, to forward

    /// The reply of the last turn this call ran (empty when it ran none, or the last one did not reply).
    [[nodiscard]] const std::string& reply() const noexcept {
        static const std::string none;
        return turns.empty() ? none : turns.back().reply;
    }
};

/// Counters since construction.
struct session_counters {
    std::uint64_t created = 0;         ///< sessions that became resident
    std::uint64_t evicted_idle = 0;
    std::uint64_t evicted_lru = 0;
    std::uint64_t cleared = 0;
    std::uint64_t skipped_busy = 0;    ///< chosen by the policy, kept because it was responding, queued or touched
    std::uint64_t dropped_pending = 0; ///< messages dropped from a full queue
    std::uint64_t evicted_manual = 0;  ///< session_cache::evict
};

/// One resident session as session_cache::snapshot() saw it (each field read on its own: a session that is
/// responding may have moved on by the time you read the next).
struct session_info {
    std::string key;
    std::chrono::nanoseconds idle{};  ///< since its last addressed interaction (the cache's clock)
    std::size_t pending = 0;          ///< messages queued behind the reply in progress
    bool responding = false;          ///< a reply, a clear or with_agent holds it
    std::size_t messages = 0;         ///< in its window, as of its last turn
    std::size_t bytes = 0;            ///< what its window holds in RAM, as of its last turn
    std::int64_t tokens = 0;          ///< its window's context size (token_window::context_tokens), as of its last turn
    /// Since its last turn that compressed the history (empty: none since it became resident).
    std::optional<std::chrono::nanoseconds> since_compression{};
};

namespace detail {
/// The counters as the cache updates them (relaxed: they are statistics, read as a snapshot).
struct session_counter_cells {
    std::atomic<std::uint64_t> created{0}, evicted_idle{0}, evicted_lru{0}, cleared{0}, skipped_busy{0}, dropped_pending{0},
        evicted_manual{0};
    [[nodiscard]] session_counters snapshot() const noexcept {
        return {created.load(),      evicted_idle.load(),    evicted_lru.load(),   cleared.load(),
                skipped_busy.load(), dropped_pending.load(), evicted_manual.load()};
    }
};
} // namespace detail

} // namespace ania
