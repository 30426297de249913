// ania/bot/options.hpp -- what a bot is given besides its configuration: the values a JSON file cannot hold.
// SPDX-License-Identifier: MIT
#pragma once

#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include <ania/agent/chat.hpp>
#include <ania/agent/hooks.hpp>
#include <ania/log.hpp>
#include <ania/tool.hpp>

namespace ania {

struct session_options;  // session/session_cache.hpp

/// The bot's own values. Where a user configures what: traits (types: which client, which store), parts
/// (stateful objects the bot cannot build itself: a scripted client in a test), these options (values
/// that are code or per program: the prompt, tools, hooks), the config (JSON: every key of the spec).
struct bot_options {
    std::string system_prompt{};  ///< the base prompt of every session
    /// Where history and long-term memory live: a SQLite file path (both in one file; empty: "ania.db"),
    /// a PostgreSQL DSN (empty: postgres.dsn), ignored by the in-process stores.
    std::string database{};
    std::vector<tool> tools{};    ///< every session's tools, beside the memory tools bound to its scope
    hook_set hooks{};             ///< every session's hooks (copied into each)
    /// Every line of every part (store, writer, memory, clients, sessions, agents): one sink (empty: silent).
    log_sink log = stderr_log_sink();
    /// Every turn a session ran, on the thread that ran it (e.g. to send the reply to the chat).
    std::function<void(std::string_view session, const chat_result&)> on_reply{};
    /// The rare knobs that are code, not configuration: called with the options the configuration gave
    /// before the parts are built (busy policy, debounce, no janitor thread in a test; the agents' limits).
    std::function<void(session_options&)> adjust_sessions{};
    std::function<void(agent_options&)> adjust_agents{};
};

} // namespace ania
