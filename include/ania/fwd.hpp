// ania/fwd.hpp -- the names of ania's hosts and vocabulary, declared only: cheap to include in a header that
// mentions them (a member pointer, a function's parameter) without composing anything. Include the header
// named beside each name where you use it. (session_cache and background_writer are constrained by concepts:
// their declarations need <ania/concepts.hpp>, so they are not here.)
// SPDX-License-Identifier: MIT
#pragma once

namespace ania {

struct message;                  // <ania/message.hpp>
struct tool;                     // <ania/tool.hpp>
struct chat_request;             // <ania/chat_request.hpp>
struct completion;               // <ania/completion.hpp>
struct config;                   // <ania/config/config.hpp>
struct agent_options;            // <ania/agent/options.hpp>
struct user_input;               // <ania/agent/chat.hpp>
struct chat_result;              // <ania/agent/chat.hpp>
struct session_options;          // <ania/session/options.hpp>
struct bot_options;              // <ania/bot/options.hpp>

class ram_store;                 // <ania/store/ram_store.hpp>
class sqlite_store;              // <ania/store/sqlite_store.hpp>
class postgres_store;            // <ania/store/postgres_store.hpp>

struct default_agent_traits;     // <ania/agent/traits.hpp>
template <class Traits>
class basic_agent;               // <ania/agent/agent.hpp> (Traits defaults to default_agent_traits there)
template <class Traits>
class basic_bot;                 // <ania/bot/bot.hpp>
struct default_bot_traits;       // <ania/bot/default_bot.hpp>: openai::client over one SQLite file

namespace memory {
class scope;                     // <ania/memory/scope.hpp>
struct default_memory_traits;    // <ania/memory/traits.hpp>
template <class Traits>
class basic_manager;             // <ania/memory/manager.hpp>
} // namespace memory

namespace openai {
class client;                    // <ania/openai/client.hpp>
} // namespace openai
namespace anthropic {
class client;                    // <ania/anthropic/client.hpp>
} // namespace anthropic

} // namespace ania
