// bench/message.cpp -- the message model on the shared data set: parsing, writing, transcript validation.
#include <benchmark/benchmark.h>

#include <string>
#include <vector>

#include <ania/json.hpp>
#include <ania/context/token_window.hpp>
#include <ania/json_writer.hpp>
#include <ania/anthropic/wire.hpp>
#include <ania/openai/wire.hpp>
#include <ania/transcript.hpp>

#include "bench_data.hpp"

namespace {

const std::vector<std::string>& lines_1k() {
    static const auto lines = ania_test::load_lines("history_1k");
    return lines;
}

std::vector<ania::message> parsed(const std::vector<std::string>& lines) {
    std::vector<ania::message> out;
    out.reserve(lines.size());
    for (const auto& l : lines) out.push_back(ania::parse_message(l));
    return out;
}

void message_parse(benchmark::State& state) {
    const auto& lines = lines_1k();
    std::size_t bytes = 0;
    for (const auto& l : lines) bytes += l.size();
    for (auto _ : state) benchmark::DoNotOptimize(parsed(lines));
    state.SetBytesProcessed(static_cast<std::int64_t>(state.iterations() * bytes));
}
BENCHMARK(message_parse)->Name("message_parse/1k")->Unit(benchmark::kMicrosecond);

void message_dump(benchmark::State& state) {
    const auto ms = parsed(lines_1k());
    for (auto _ : state)
        for (const auto& m : ms) benchmark::DoNotOptimize(ania::dump(m));
}
BENCHMARK(message_dump)->Name("message_dump/1k")->Unit(benchmark::kMicrosecond);

void transcript_validate(benchmark::State& state) {
    const auto name = state.range(0) == 1000 ? "history_1k" : state.range(0) == 10000 ? "history_10k" : "history_100k";
    const auto ms = parsed(ania_test::load_lines(name));
    for (auto _ : state) benchmark::DoNotOptimize(ania::is_valid_transcript(ms));
}
BENCHMARK(transcript_validate)->Name("transcript_validate")->Arg(1000)->Arg(100000)->Unit(benchmark::kMicrosecond);

/// One assistant message with n tool calls, answered in reverse order plus one duplicate result, so that
/// repair_transcript runs over all of it: the shape a hostile or runaway model can send.
void transcript_repair_wide(benchmark::State& state) {
    const auto n = static_cast<int>(state.range(0));
    std::vector<ania::tool_call> cs;
    for (int i = 0; i < n; ++i) cs.push_back({"call_" + std::to_string(i), "function", "f", "{}", {}, {}});
    std::vector<ania::message> t = {ania::message::user("u"), ania::message::assistant_calls(std::move(cs))};
    for (int i = n - 1; i >= 0; --i) t.push_back(ania::message::tool_result("call_" + std::to_string(i), "r"));
    t.push_back(ania::message::tool_result("call_0", "again"));
    for (auto _ : state) {
        state.PauseTiming();
        std::vector<ania::message> copy = t;
        state.ResumeTiming();
        benchmark::DoNotOptimize(ania::repair_transcript(copy));
    }
}
BENCHMARK(transcript_repair_wide)->Name("transcript_repair_wide")->Arg(1000)->Arg(40000)->Unit(benchmark::kMillisecond);

// The wire body of one request whose history is the first 1k / 10k messages of the data set (line 0 is the
// system prompt) plus this turn's user message: the floor a real client pays on every call.
void request_to_json(benchmark::State& state, const char* data) {
    const auto ms = parsed(ania_test::load_lines(data));
    const std::vector<ania::message> turn{ania::message::user("[nickname:小明 id:qq:1] 今天的会议几点开始？")};
    const ania::chat_request req{{std::span(ms).first(1), std::span(ms).subspan(1), turn}};
    std::size_t bytes = 0;
    for (auto _ : state) {
        std::string body = ania::request_to_json(req, "deepseek-chat");
        bytes = body.size();
        benchmark::DoNotOptimize(body);
    }
    state.SetBytesProcessed(static_cast<std::int64_t>(state.iterations() * bytes));
}
BENCHMARK_CAPTURE(request_to_json, 1k, "history_1k")->Name("request_to_json/1k")->Unit(benchmark::kMicrosecond);
BENCHMARK_CAPTURE(request_to_json, 10k, "history_10k")->Name("request_to_json/10k")->Unit(benchmark::kMicrosecond);

// The body the agent sends each turn (#30): a resident window of 1k / 10k messages whose wire bytes are
// cached (written at the first request, before the loop), one new user message. request_body/* builds the
// pieces openai::client hands to curl (no copy of the history); request_body/*/flat also copies them into
// one buffer (what a transport that wants contiguous bytes would pay). Target: /10k <= 0.15 ms, within 1.5x of /1k.
/// A resident session of the data set: line 0 (the system prompt) apart, the rest in a token window.
struct resident {
    std::vector<ania::message> system;
    ania::token_window<> window;
    std::vector<ania::message> turn{ania::message::user("[nickname:小明 id:qq:1] 今天的会议几点开始？")};

    explicit resident(const char* data) {
        auto ms = parsed(ania_test::load_lines(data));
        system.assign(ms.begin(), ms.begin() + 1);
        ms.erase(ms.begin());
        window.append(std::move(ms));
    }
};

void request_body(benchmark::State& state, const char* data, bool flat) {
    resident r(data);
    auto& [system, window, turn] = r;
    ania::openai::body_options opt;
    opt.model = "deepseek-chat";
    const ania::chat_request req{{system, window.messages(), turn}, {}, {}, 0, window.wire()};
    (void)ania::openai::request_wire(req, opt);  // the window's first request writes the cache
    std::size_t bytes = 0;
    for (auto _ : state) {
        ania::wire_body body = ania::openai::request_wire(req, opt);
        bytes = body.size();
        if (flat) {
            std::string one = body.flatten();
            benchmark::DoNotOptimize(one);
        }
        benchmark::DoNotOptimize(body);
    }
    state.counters["body_bytes"] = static_cast<double>(bytes);
    state.counters["cache_bytes"] = static_cast<double>(window.wire_bytes().memory_bytes());
    state.counters["message_bytes"] = static_cast<double>(window.message_bytes());
}
BENCHMARK_CAPTURE(request_body, 1k, "history_1k", false)->Name("request_body/1k")->Unit(benchmark::kMicrosecond);
BENCHMARK_CAPTURE(request_body, 10k, "history_10k", false)->Name("request_body/10k")->Unit(benchmark::kMicrosecond);
BENCHMARK_CAPTURE(request_body, 1k_flat, "history_1k", true)->Name("request_body/1k/flat")->Unit(benchmark::kMicrosecond);
BENCHMARK_CAPTURE(request_body, 10k_flat, "history_10k", true)->Name("request_body/10k/flat")->Unit(benchmark::kMicrosecond);

// The same for the Anthropic Messages body (prompt caching on): anthropic_request_body/* assembles it around the
// window's run (the history grouped by role, written once: one shared view, as for OpenAI; the request writes
// the base prompt, the last breakpoint, the turn and the top level); anthropic_request_body/*/whole is the
// body of a cold window (anthropic::request_body: each message's blocks through a document, then copied).
void anthropic_body(benchmark::State& state, const char* data, bool cached) {
    resident r(data);
    auto& [system, window, turn] = r;
    ania::anthropic::body_options opt;
    opt.model = "claude-sonnet";
    opt.cache_prompt = true;
    const ania::chat_request req{{system, window.messages(), turn}, {}, {}, 0, cached ? window.wire() : nullptr};
    (void)ania::anthropic::request_wire(req, opt);
    std::size_t bytes = 0;
    for (auto _ : state) {
        ania::wire_body body = ania::anthropic::request_wire(req, opt);
        bytes = body.size();
        benchmark::DoNotOptimize(body);
    }
    state.counters["body_bytes"] = static_cast<double>(bytes);
    state.counters["cache_bytes"] = static_cast<double>(window.wire_bytes().memory_bytes());
    state.counters["message_bytes"] = static_cast<double>(window.message_bytes());
}
BENCHMARK_CAPTURE(anthropic_body, 1k, "history_1k", true)->Name("anthropic_request_body/1k")->Unit(benchmark::kMicrosecond);
BENCHMARK_CAPTURE(anthropic_body, 10k, "history_10k", true)->Name("anthropic_request_body/10k")->Unit(benchmark::kMicrosecond);
BENCHMARK_CAPTURE(anthropic_body, 1k_whole, "history_1k", false)->Name("anthropic_request_body/1k/whole")->Unit(benchmark::kMicrosecond);
BENCHMARK_CAPTURE(anthropic_body, 10k_whole, "history_10k", false)->Name("anthropic_request_body/10k/whole")->Unit(benchmark::kMicrosecond);

} // namespace

BENCHMARK_MAIN();
