// ania/session/options.hpp -- how a session cache behaves: the limits, the queue of a busy session, leases, callbacks.
// SPDX-License-Identifier: MIT
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include <ania/agent/chat.hpp>
#include <ania/concepts.hpp>
#include <ania/defaults.hpp>
#include <ania/log.hpp>

namespace ania {

/// What happens to a message for a session that is responding ("double texting").
enum class busy_policy : std::uint8_t {
    queue,             ///< the original: queued, merged into the next turn in arrival order (the default)
    reject,            ///< refused (respond_status::rejected); the reply in progress goes on
    latest_only,       ///< only the newest waits; the ones it replaces are dropped (counted in `dropped`)
    one_per_message,   ///< queued, and each becomes a turn of its own, in order
    steer,             ///< queued, and handed to the running turn after its next tool batch (chat_options::steer);
                       ///< what is still queued when the turn ends is its next turn, as with `queue`
};

/// The moments at the end of a turn where another thread's message may arrive (session_options::on_handoff).
enum class handoff_point : std::uint8_t {
    turn_done,  ///< the turn returned; the owner has not yet looked at the queue again (no lock held)
    released,   ///< the owner saw an empty queue and let go (no lock held)
};

/// Cross-process ownership of sessions (several processes behind one chat platform over one database):
/// `acquire(key)` before a session answers, `release(key)` when it lets go. postgres_session_leases
/// (<ania/session/postgres_leases.hpp>) implements them with the store's leases and a heartbeat.
struct session_lease_hooks {
    /// True when this process may answer the session now. `fresh` is set when the session may have been
    /// answered elsewhere since this process last held it: the resident agent is rebuilt from the store.
    std::function<bool(std::string_view key, bool& fresh)> acquire{};
    std::function<void(std::string_view key)> release{};
    /// How long respond() keeps trying to acquire before it hands the messages over (respond_status::elsewhere).
    std::chrono::milliseconds wait{0};
};

/// How a session cache behaves; `from_config<session_options>(cfg)` (<ania/config/from_config.hpp>) reads `session.*`.
struct session_options {
    session_limits limits{};  ///< max_idle (120 min), max_sessions (128); 0 disables either
    /// SPEC §3 group auto-clear: after this many consecutive messages that do not address the bot, the
    /// session is cleared (0 disables). An addressed message resets the count.
    std::int64_t group_auto_clear = defaults::session_group_auto_clear;
    /// Messages that arrive while the session responds wait here, merged into its next turn in arrival
    /// order; past this many the oldest is dropped (0: no cap).
    std::size_t max_pending = 20;
    busy_policy when_busy = busy_policy::queue;
    std::chrono::milliseconds tick = std::chrono::minutes(1);  ///< the janitor's period
    /// A global limit on turns running at once (the original's rate_limit is 2; 0 = none). A session that
    /// waits for a slot owns itself meanwhile: its messages queue behind it and it drains them; a message for
    /// another idle session is never reported as queued behind a reply it is not part of.
    std::size_t max_concurrent_replies = 0;
    bool janitor = true;  ///< false: no thread; the caller calls tick() (tests, an event loop of its own)
    /// Every turn a session ran (on the thread that ran it), e.g. to send the reply to the chat.
    std::function<void(std::string_view key, const chat_result&)> on_reply{};
    /// Every session that left the cache, and why (on the thread that evicted or cleared it).
    std::function<void(std::string_view key, evict_reason)> on_evicted{};
    /// Debounce (opt-in, beyond the spec): a session with messages waits until none has arrived for this
    /// long before it replies, so a user who sends three short lines gets one answer to all three. Bounded
    /// by `debounce_max` from the first waiting message. 0 disables (the original replies at once).
    std::chrono::milliseconds debounce{0};
    std::chrono::milliseconds debounce_max{5'000};
    /// Hibernate (opt-in, beyond the spec): the tools a session added at run time (agent.add_tool) are kept
    /// when it is evicted and added again when it is rebuilt, so an eviction is not the restart the spec
    /// accepts. Kept in RAM (a tool is code), for at most `max_hibernated` sessions (the oldest forgotten);
    /// a clear forgets them too.
    bool hibernate = false;
    std::size_t max_hibernated = 4096;
    /// Called at each handoff_point of each turn, on the owner's thread: tracing, and the tests that deliver
    /// a message at every point of the end of a reply. It may call respond() (for another message).
    std::function<void(std::string_view key, handoff_point)> on_handoff{};
    /// Several processes: a session answers only while it holds the lease (none: this process owns all).
    session_lease_hooks lease{};
    log_sink log = stderr_log_sink();
};

} // namespace ania
