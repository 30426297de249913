// ania/bot/default_bot.hpp -- `ania::bot`: an OpenAI-compatible model, history and memory in one SQLite file.
// Needs dependency('ania-openai') and dependency('ania-sqlite').
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

} // namespace ania
