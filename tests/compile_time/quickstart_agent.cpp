// tests/compile_time/quickstart_agent.cpp -- the quickstart's parts with its agent (basic_agent over the
// quickstart's traits), constructed, and one turn: what scripts/compile_time.sh times next to quickstart_types.cpp.
#include <ania/ania.hpp>
#include <ania/memory/sqlite_backend.hpp>
#include <ania/store/sqlite_store.hpp>

struct client {
    ania::completion complete(const ania::chat_request&) { return ania::completion::failure("x"); }
};
struct bot_traits : ania::default_agent_traits {
    using store = ania::sqlite_store;
    using client = ::client;
    using events = ania::event_functions;
};

int main() {
    const ania::config cfg = ania::parse_config("{}");
    ania::sqlite_store store("agent.db");
    ania::background_writer<ania::sqlite_store> writer(store);
    ania::memory::sqlite_backend memories("agent.db");
    ania::memory::sqlite_manager memory(memories, ania::from_config<ania::memory::manager_options>(cfg));
    const auto group = ania::memory::scope::from("g:1");
    ania::agent_options opt = ania::from_config<ania::agent_options>(cfg);
    ania::basic_agent<bot_traits> bot(writer, {.client = client{}, .tools = ania::tool_registry(ania::memory::make_tools(memory, group))},
                                      "g:1", std::move(opt));
    const ania::chat_result r = bot.chat("hi");
    return r.ok() ? 1 : 0;  // the client always fails: a failed turn is the expected end (also run as a test)
}
