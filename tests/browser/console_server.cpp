// tests/browser/console_server.cpp -- a bot with its operator console, for the browser test
// (console_test.py): one SQLite file in DIR, a SCRIPTED model (no LLM here; bot_rules.hpp), the console on a
// free loopback port. It seeds MEMORIES memories in g:1 (through the manager) and SESSIONS resident sessions
// (one turn each), then the memories the test names on stdin are saved *through the model's memory_save
// tool* in g:1, one per line, so that what the page shows came the way a chat user's text comes. It prints
// {"port":P,"token":T} and serves until stdin closes.
//
//     console_server DIR MEMORIES SESSIONS
#include <cstdio>
#include <iostream>
#include <string>

#include <ania/admin/console.hpp>
#include <ania/bot/sqlite.hpp>

#include "bot_rules.hpp"

int main(int argc, char** argv) {
    if (argc != 4) {
        std::cerr << "usage: console_server DIR MEMORIES SESSIONS\n";
        return 2;
    }
    const std::string dir = argv[1];
    const int memories = std::stoi(argv[2]), sessions = std::stoi(argv[3]);
    const std::string token = "browser-test-token";
    using traits = ania::bot_traits<ania::testing::scripted_client, ania::sqlite_store>;
    ania::bot_options o;
    o.system_prompt = "你是 Ania。";
    o.database = dir + "/console.db";
    o.log = [](ania::log_level l, std::string_view t) {
        if (l >= ania::log_level::warn) std::cerr << t << '\n';
    };
    const ania::config cfg = ania::parse_config(R"({"admin":{"enabled":true,"listen":"127.0.0.1:0","token":")" + token + R"("}})");
    ania::basic_bot<traits> bot(cfg, std::move(o), {.client = ania_test::bot::rule_model()});

    const ania::memory::scope g1 = ania::memory::scope::from("g:1");
    for (int i = 0; i < memories; ++i)
        (void)bot.memory().save(g1, "operator seed memory number " + std::to_string(i) + " about topic " + std::to_string(i * 7919 % 1000),
                                "qq:" + std::to_string(i % 17), {"seed"});
    for (int i = 0; i < sessions; ++i) (void)bot.respond("g:" + std::to_string(1000 + i), "hello from session " + std::to_string(i));

    std::string line;
    std::cout << "{\"ready\":false}" << std::endl;
    while (std::getline(std::cin, line) && line != "serve")
        if (bot.respond("g:1", "记住 " + line).status != ania::respond_status::replied) std::cerr << "not saved: " << line << '\n';
    std::cout << "{\"port\":" << bot.admin_port() << ",\"token\":\"" << token << "\"}" << std::endl;
    while (std::getline(std::cin, line)) {
    }
    return 0;
}
