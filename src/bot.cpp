// src/bot.cpp -- the compiled library of the default bot (dependency('ania-bot-compiled')): `ania::bot`
// (basic_bot<default_bot_traits>: openai::client over one SQLite file), its agent type and its session cache,
// instantiated once. A program that uses ania::bot then compiles its own code and the headers' declarations,
// not the bot (examples/hello_bot.cpp: docs/architecture.md, "Compiled mode").
// SPDX-License-Identifier: MIT
#define ANIA_BUILDING_LIBRARY  // the -inl headers are this library's to include
#include <ania/bot/default_bot.hpp>

namespace ania {

template class basic_bot<default_bot_traits>;
template class basic_agent<bot::agent_type::traits>;
template class session_cache<bot::agent_type, default_bot_traits::eviction, default_bot_traits::clock>;

} // namespace ania
