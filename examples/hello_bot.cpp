// examples/hello_bot.cpp -- the smallest real bot: one SQLite file, an OpenAI-compatible model, a read-eval loop.
// Run: hello_bot bot.json < questions.txt   (bot.json: {"llm": {"base_url": ..., "api_key": ..., "model": ...}})
#include <iostream>
#include <string>

#include <ania/bot/default_bot.hpp>

int main(int argc, char** argv) {
    ania::bot bot(ania::load_config_file(argc > 1 ? argv[1] : "bot.json"),
                  {.system_prompt = "你是 Ania，一个简洁的助手。", .database = argc > 2 ? argv[2] : "hello.db"});
    for (std::string line; std::getline(std::cin, line);)
        std::cout << bot.respond("f:1", line).reply() << std::endl;
}
