// examples/parts.cpp -- what ania::bot does for you, by hand: an agent type composed from slots, its writer,
// long-term memory bound to a scope, a session cache, a policy of your own. The snippets of docs/agent.md are
// regions of this file (checked by tests/check_snippets.py), so they cannot use a name they do not define.
// Runs against a SCRIPTED model (no network): `parts [history.db]`.
#include <cstdio>
#include <memory>
#include <numeric>
#include <string>
#include <utility>
#include <vector>

// [agent-type]
#include <ania/ania.hpp>
#include <ania/store/sqlite_store.hpp>

struct my_client {  // your model: anything with this member (ania/concepts.hpp: chat_client)
    ania::completion complete(const ania::chat_request& request) {  // request.messages is a view, not a copy
        return ania::completion::success(ania::message::assistant("收到 " + request.messages.back().text()));
    }
};
struct bot_traits : ania::default_agent_traits {
    using store = ania::sqlite_store;      // history rows (default: ania::ram_store)
    using client = my_client;              // required: there is no default model
};
using bot = ania::basic_agent<bot_traits>;
// the same, by slot, in any order (a duplicate or unknown slot is a compile-time error):
using same_bot = ania::agent_of<ania::slot::client<my_client>, ania::slot::store<ania::sqlite_store>>;
// [agent-type]

#include <ania/memory/sqlite_backend.hpp>

// [eviction-policy]
struct most_bytes_first {  // evicts the sessions that hold the most bytes, down to max_sessions
    std::size_t keep;
    explicit most_bytes_first(const ania::session_limits& l) : keep(l.max_sessions) {}
    void select(std::span<const ania::resident_session> s, std::int64_t, std::vector<ania::eviction_choice>& out) const {
        if (keep == 0 || s.size() <= keep) return;
        std::vector<std::size_t> order(s.size());
        std::iota(order.begin(), order.end(), 0);
        std::nth_element(order.begin(), order.begin() + static_cast<std::ptrdiff_t>(s.size() - keep), order.end(),
                         [&](std::size_t a, std::size_t b) { return s[a].bytes > s[b].bytes; });
        for (std::size_t k = 0; k < s.size() - keep; ++k) out.push_back({order[k], ania::evict_reason::lru});
    }
};
using my_cache = ania::session_cache<bot, most_bytes_first>;  // a bot: default_bot_traits with `using eviction`
// [eviction-policy]

// [memory-traits]
struct my_memory : ania::memory::default_memory_traits {
    using backend = ania::memory::sqlite_backend;
    using similarity = ania::memory::idf_similarity;  // embedder: anything with std::optional<std::vector<float>> embed(text)
};
// [memory-traits]

int main(int argc, char** argv) {
    const std::string db = argc > 1 ? argv[1] : "parts.db";
    const ania::config cfg = ania::parse_config(R"({"max_context_tokens": 64000})");

    // [agent]
    ania::sqlite_store store(db);                              // WAL, FULL sync, quick_check at open
    ania::background_writer<ania::sqlite_store> writer(store); // one writer thread for every session of the store
    ania::agent_options opt = ania::from_config<ania::agent_options>(cfg);  // max_context_tokens, compress_ratio
    opt.system_prompt = "你是 Ania。";
    bot agent(writer, {.client = my_client{}}, "g:100001", opt);  // + .compression_client, .hooks, .tools, ...

    std::stop_source stop;                                     // stop.request_stop() is /stop
    ania::chat_result r = agent.chat("[nickname:小明] 你好", {.injections = {"(this turn only)"}}, stop.get_token());
    // r.reply, r.end (replied / max_iterations / cancelled / failed / blocked), r.stats, r.compression, r.messages
    // [agent]
    std::printf("agent: %s\n", r.reply.c_str());

    // [memory]
    ania::memory::sqlite_backend memories(db);                        // table ania_memory; disabled if unusable
    ania::memory::sqlite_manager memory(memories,                     // basic_manager<sqlite_memory_traits>
        ania::from_config<ania::memory::manager_options>(cfg));       // cap 200, 2000 runes, ...
    const auto group = ania::memory::scope::from("g:100001");         // only g:<digits> / f:<digits>
    std::vector<ania::tool> tools = ania::memory::make_tools(memory, group);  // none if memory is disabled
    // tools[i].definition() goes into the request's "tools"; tools[i].handler(call.arguments) answers a call.
    std::string block = ania::memory::inject_block(memory, group, "咖啡");  // for this request only
    // [memory]
    ania::memory::basic_manager<my_memory> mine(memories, ania::from_config<ania::memory::manager_options>(cfg));
    std::printf("memory: %zu tools, %zu bytes injected, %zu entries\n", tools.size(), block.size(), mine.size(group));

    // [sessions]
    // What ania::bot does for you (include/ania/bot/bot.hpp), by hand. The bot's options, shared by all its
    // sessions (one copy of the prompt and the texts, not one per session); each session's memory tools
    // bound to its own scope (a key that is not a scope gets none).
    auto shared = std::make_shared<const ania::agent_options>(opt);
    my_cache sessions(
        [&](const std::string& key) {  // "g:<group>" / "f:<user>"
            ania::tool_registry session_tools;
            if (const auto s = ania::memory::scope::parse(key)) session_tools = ania::tool_registry(ania::memory::make_tools(memory, *s));
            return std::make_unique<bot>(writer, bot::parts{.client = my_client{}, .tools = std::move(session_tools)}, shared, key);
        },
        ania::from_config<ania::session_options>(cfg));   // idle 120 min, 128 resident, auto-clear after 30

    ania::respond_result rr = sessions.respond("g:100001", "[nickname:小明] @Ania 你好", /*addressed=*/true);
    // rr.status: replied (rr.turns), queued (the session is answering: tell the user once, rr.tell_queued),
    // ignored / cleared (not addressed: counted for the group auto-clear). sessions.stop(key) is /stop.
    // [sessions]
    std::printf("sessions: %s\n", rr.reply().c_str());
    return r.ok() && rr.status == ania::respond_status::replied ? 0 : 1;
}
