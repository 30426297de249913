// examples/group_bot.cpp -- the spec's bot (SPEC §3, "pluginaichat"): many conversations at once, groups and
// private chats, history and memory in one SQLite file, a cheaper compression model, idle and LRU eviction,
// the group auto-clear: all of it is ania::bot and the configuration (bot.json: llm.*, compressor.*, session.*).
// Input, one message a line: "<session> <text>"; a group message addresses the bot when it starts with @Ania.
// Run: group_bot bot.json group.db < messages.txt
#include <iostream>
#include <string>

#include <ania/bot/default_bot.hpp>

int main(int argc, char** argv) {
    ania::bot bot(ania::load_config_file(argc > 1 ? argv[1] : "bot.json"),
                  {.system_prompt = "你是 Ania，群聊里的助手。", .database = argc > 2 ? argv[2] : "group.db"});
    for (std::string session, text; std::cin >> session && std::getline(std::cin >> std::ws, text);) {
        const bool addressed = session.starts_with("f:") || text.starts_with("@Ania");  // private, or an @-mention
        for (const ania::chat_result& turn : bot.respond(session, text, addressed).turns) std::cout << session << ": " << turn.reply << std::endl;
    }
}
