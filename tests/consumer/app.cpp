// tests/consumer/app.cpp -- a user program: ania found as a subproject, through pkg-config or through CMake.
#include <cstdio>
#include <vector>

// The headers it uses, not the umbrella: what is checked is how ania is found and linked (the umbrella is
// checked by the one-header tests); a TU of the umbrella took a third of this step's time.
#include <ania/json.hpp>  // dump()
#include <ania/message.hpp>
#include <ania/transcript.hpp>
#include <ania/version.hpp>
#ifdef ANIA_CONSUMER_SQLITE
#include <ania/store/sqlite_store.hpp>
#endif
#ifdef ANIA_CONSUMER_OPENAI
#include <ania/openai/client.hpp>
#endif
#ifdef ANIA_CONSUMER_ADMIN
#include <ania/admin/console.hpp>
#endif
#ifdef ANIA_CONSUMER_BOT
#include <ania/bot/default_bot.hpp>
#endif

int main() {
    std::vector<ania::message> history = {ania::message::user("hi"), ania::message::tool_result("orphan", "x")};
    ania::repair_transcript(history);
#ifdef ANIA_CONSUMER_SQLITE
    ania::sqlite_store store(":memory:");
    store.append("s", history);
    history = store.load("s");
#endif
#ifdef ANIA_CONSUMER_OPENAI
    // Links libcurl through the dependency: nothing listens on port 1, so this is a typed network failure.
    ania::openai::client llm({.base_url = "http://127.0.0.1:1/v1", .model = "m", .retry = {.max_retries = 0}});
    const ania::completion c = llm.complete({ania::message_sequence(std::span<const ania::message>(history)), {}, {}});
    if (c.ok || c.cause.kind != ania::failure_kind::network) return 1;
#endif
#ifdef ANIA_CONSUMER_BOT
    // Links the bot's compiled library (ANIA_COMPILED_BOT: the program has only its declarations), SQLite and
    // libcurl: nothing listens on port 1, so the turn fails on the network, typed.
    ania::config cfg;
    cfg.llm = {.base_url = "http://127.0.0.1:1/v1", .model = "m", .max_retries = 0};
    ania::bot bot(cfg, {.database = ":memory:", .log = {}});
    const ania::respond_result r = bot.respond("f:1", "hi");
    if (r.turns.size() != 1 || r.turns[0].ok() || r.turns[0].failure.kind != ania::failure_kind::network) return 1;
#endif
#ifdef ANIA_CONSUMER_ADMIN
    // Links cpp-httplib through the dependency: the console listens on a port the system picks, then stops.
    ania::admin::console console({.listen = "127.0.0.1:0", .token = "consumer", .log = {}}, {});
    if (console.port() <= 0) return 1;
#endif
    std::printf("ania %s: %s\n", ANIA_VERSION_STRING, ania::dump(history.at(0)).c_str());
    return history.size() == 1 ? 0 : 1;
}
