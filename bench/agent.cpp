// bench/agent.cpp -- what the library adds to an LLM call: one agent turn with a zero-latency SCRIPTED client
// (no model) over a session whose history holds the first 1k / 10k messages of the data set. Included:
// request assembly, the transcript check, the tool-free loop, the commit of both copies and the store's
// append (the writer is flushed every turn, so its thread's work is inside the figure). Target: O(turn),
// so agent_turn/overhead/10k within 2x of /1k. The wire body is bench/message.cpp's request_to_json.
// bot_respond/overhead/*: the same turn through basic_bot (the session cache's lookup and ownership, the
// session's memory tools offered): target within 1.2x of agent_turn/overhead/* and O(turn).
#include <benchmark/benchmark.h>

#include <string>
#include <vector>

#include <ania/ania.hpp>
#include <ania/bot/bot.hpp>

#include "bench_data.hpp"
#include "instant_client.hpp"

namespace {

using ania_bench::instant_client;

void agent_turn(benchmark::State& state, const char* data) {
    const ania_test::conversation c = ania_test::load_conversation(data);
    ania::ram_store store;
    store.append("g:1", c.history);
    ania::background_writer<ania::ram_store> writer(store);
    ania::agent_options opt{.system_prompt = c.system_prompt};
    opt.window.max_context_tokens = 0;  // no compression: the figure is the turn, not a summary
    ania::agent<instant_client> agent(writer, {.client = {}}, "g:1", opt);
    benchmark::DoNotOptimize(agent.window().size());  // the load, outside the loop
    for (auto _ : state) {
        ania::chat_result r = agent.chat("[nickname:小明 id:qq:1] 今天的会议几点开始？");
        writer.flush();
        benchmark::DoNotOptimize(r);
    }
}
BENCHMARK_CAPTURE(agent_turn, 1k, "history_1k")->Name("agent_turn/overhead/1k")->Unit(benchmark::kMicrosecond);
BENCHMARK_CAPTURE(agent_turn, 10k, "history_10k")->Name("agent_turn/overhead/10k")->Unit(benchmark::kMicrosecond);

void bot_respond(benchmark::State& state, const char* data) {
    const ania_test::conversation c = ania_test::load_conversation(data);
    ania::config cfg;
    cfg.max_context_tokens = 0;  // no compression, as above
    ania::bot_options opt{.system_prompt = c.system_prompt, .log = {}};
    opt.adjust_sessions = [](ania::session_options& s) { s.janitor = false; };
    ania::basic_bot<ania::bot_traits<instant_client, ania::ram_store>> bot(cfg, std::move(opt), {.client = {}});
    bot.store().append("g:1", c.history);
    benchmark::DoNotOptimize(bot.respond("g:1", "你好"));  // the load, outside the loop
    for (auto _ : state) {
        ania::respond_result r = bot.respond("g:1", "[nickname:小明 id:qq:1] 今天的会议几点开始？");
        bot.writer().flush();
        benchmark::DoNotOptimize(r);
    }
}
BENCHMARK_CAPTURE(bot_respond, 1k, "history_1k")->Name("bot_respond/overhead/1k")->Unit(benchmark::kMicrosecond);
BENCHMARK_CAPTURE(bot_respond, 10k, "history_10k")->Name("bot_respond/overhead/10k")->Unit(benchmark::kMicrosecond);

} // namespace

BENCHMARK_MAIN();
