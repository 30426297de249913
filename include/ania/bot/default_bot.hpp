// ania/bot/default_bot.hpp -- `ania::bot`: an OpenAI-compatible model, history and memory in one SQLite file.
// Needs dependency('ania-openai') and dependency('ania-sqlite'), or, in compiled mode,
// dependency('ania-bot-compiled'): the bot already instantiated in a library (ANIA_COMPILED_BOT), so that a
// program using it compiles in a fraction of the time (docs/architecture.md, "Compiled mode").
// SPDX-License-Identifier: MIT
//
//     #include <ania/bot/default_bot.hpp>
//     int main() {
//         ania::bot bot(ania::load_config_file("bot.json"), {.system_prompt = "你是 Ania。", .database = "bot.db"});
//         for (std::string line; std::getline(std::cin, line);) std::cout << bot.respond("f:1", line).reply() << '\n';
//     }
#pragma once

#include <ania/bot/bot.hpp>
#include <ania/bot/openai.hpp>
#include <ania/bot/sqlite.hpp>
#include <ania/openai/client.hpp>
#include <ania/store/sqlite_store.hpp>

namespace ania {

struct default_bot_traits : bot_traits<openai::client, sqlite_store> {};
using bot = basic_bot<default_bot_traits>;

#ifdef ANIA_COMPILED_BOT  // dependency('ania-bot-compiled') defines it; its library is src/bot.cpp
#ifndef ANIA_COMPILED_LIB
#error "ANIA_COMPILED_BOT is compiled mode: define ANIA_COMPILED_LIB too (dependency('ania-bot-compiled') does)"
#endif
extern template class basic_bot<default_bot_traits>;
extern template class basic_agent<bot::agent_type::traits>;
extern template class session_cache<bot::agent_type, default_bot_traits::eviction, default_bot_traits::clock>;
#endif

} // namespace ania
