// bench/compressor.cpp -- truncation and budget trim on the shared histories (1k, 10k, 100k messages).
// Names are fixed so that figures compare across runs: truncate_oldest_half/<n>, budget_trim/half/<n>,
// budget_trim/32k/<n> (token counts already cached in the window), budget_trim_cold/half/100k (counting
// included; what it cannot go below: budget_trim_cold/floor_stream/100k, /floor_touch/100k),
// clear_tool_results/<n> (the ladder's cheap rung: the edits for every tool result but the newest 3;
// counters: the share of the history's tokens it removes, and the share truncate_oldest_half removes, measured
// on the same window). Counting is the golden files' rule (half_char_counter: 4 + chars / 2).
#include <benchmark/benchmark.h>

#include <map>
#include <memory>
#include <string>
#include <vector>

#include <ania/compressor/budget_trim.hpp>
#include <ania/compressor/clear_tool_results.hpp>
#include <ania/compressor/truncate_oldest_half.hpp>
#include <ania/context/token_window.hpp>
#include <ania/json.hpp>

#include "bench_data.hpp"

namespace {

using window_t = ania::token_window<ania::half_char_counter>;

const window_t& window_of(const std::string& size) {
    static std::map<std::string, std::unique_ptr<window_t>> cache;
    auto& slot = cache[size];
    if (!slot) {
        slot = std::make_unique<window_t>();
        for (const auto& l : ania_test::load_lines("history_" + size)) slot->append(ania::parse_message(l));
    }
    return *slot;
}

void truncate(benchmark::State& state, const std::string& size) {
    const window_t& w = window_of(size);
    const ania::truncate_oldest_half trunc;
    for (auto _ : state) {
        ania::compression_result r = trunc.compress({w.messages(), w.prefix_tokens()});
        auto kept = w.messages().subspan(r.keep_from);  // what token_window::apply does: move the start offset
        benchmark::DoNotOptimize(kept);
    }
}

void truncate_cut_only(benchmark::State& state, const std::string& size) {
    const window_t& w = window_of(size);
    for (auto _ : state) {
        auto kept = w.messages().subspan(ania::truncate_oldest_half::cut(w.messages()));
        benchmark::DoNotOptimize(kept);
    }
}

void trim(benchmark::State& state, const std::string& size, bool half) {
    const window_t& w = window_of(size);
    const ania::budget_trim<ania::half_char_counter> t{32000, half ? 0.5 : 0.0, {}};
    for (auto _ : state) {
        ania::compression_result r = t.compress({w.messages(), w.prefix_tokens()});
        benchmark::DoNotOptimize(r);
    }
}

void trim_cold(benchmark::State& state, const std::string& size) {
    const window_t& w = window_of(size);
    const ania::budget_trim<ania::half_char_counter> t{0, 0.5, {}};
    for (auto _ : state) {
        ania::compression_result r = t.compress({w.messages(), {}});  // counts every message first
        benchmark::DoNotOptimize(r);
    }
}

// What trim_cold cannot go below, on the same machine in the same run. The counter reads each message (224
// bytes, one array) and the strings it counts (text, reasoning, tool names and arguments: a heap block each).
// floor_stream reads as many bytes as the messages and their strings hold, from one buffer, as fast as the
// core streams (the same footprint in the caches, the access pattern at its best: a bandwidth floor);
// floor_touch reads one byte of each of those strings and nothing else (a latency floor: visiting them).
std::string counted_bytes(const window_t& w) {
    std::string all(w.size() * sizeof(ania::message), '\x01');  // the messages' own bytes
    for (const ania::message& m : w.messages()) {
        if (m.form == ania::content_form::text) all += m.content;
        for (const ania::content_part& p : m.parts)
            if (p.type == ania::content_part::kind::text) all += p.text;
        if (m.reasoning_content) all += *m.reasoning_content;
        for (const ania::tool_call& c : m.tool_calls) all.append(c.name).append(c.arguments);
    }
    return all;
}

void trim_cold_floor_stream(benchmark::State& state, const std::string& size) {
    const std::string all = counted_bytes(window_of(size));
    for (auto _ : state) benchmark::DoNotOptimize(ania::detail::count_runes_fast(all));
    state.SetBytesProcessed(static_cast<std::int64_t>(state.iterations()) * static_cast<std::int64_t>(all.size()));
}

void trim_cold_floor_touch(benchmark::State& state, const std::string& size) {
    const window_t& w = window_of(size);
    const auto first = [](const std::string& t) -> unsigned { return t.empty() ? 0U : static_cast<unsigned char>(t[0]); };
    for (auto _ : state) {
        unsigned sum = 0;
        for (const ania::message& m : w.messages()) {
            if (m.form == ania::content_form::text) sum += first(m.content);
            for (const ania::content_part& p : m.parts) sum += first(p.text);
            if (m.reasoning_content) sum += first(*m.reasoning_content);
            for (const ania::tool_call& c : m.tool_calls) sum += first(c.name) + first(c.arguments);
        }
        benchmark::DoNotOptimize(sum);
    }
}

void clear_results(benchmark::State& state, const std::string& size) {
    const window_t& w = window_of(size);
    const ania::clear_tool_results rung;  // keep 3, the default placeholder
    const ania::compress_input in{w.messages(), w.prefix_tokens(), w.context_tokens(), 0, w.input_count()};
    std::size_t edits = 0;
    for (auto _ : state) {
        ania::compression_result r = rung.compress(in);
        edits = r.edits.size();
        benchmark::DoNotOptimize(r);
    }
    // The table of #31: what each rung removes from this history, in the window's tokens.
    const ania::compression_result r = rung.compress(in);
    std::int64_t removed = 0;
    for (const auto& e : r.edits) removed += w.tokens(e.index) - w.estimate(e.applied_to(w[e.index]));
    const auto total = static_cast<double>(w.prefix_tokens().back() - w.prefix_tokens().front());
    const std::size_t cut = ania::truncate_oldest_half::cut(w.messages());
    state.counters["tool_results_cleared"] = static_cast<double>(edits);
    state.counters["clear_removed_pct"] = 100.0 * static_cast<double>(removed) / total;
    state.counters["truncate_removed_pct"] = 100.0 * static_cast<double>(w.prefix_tokens()[cut] - w.prefix_tokens().front()) / total;
}

const int registered = [] {
    for (const std::string size : {"1k", "10k"})
        benchmark::RegisterBenchmark(("clear_tool_results/" + size).c_str(), clear_results, size)->Unit(benchmark::kMicrosecond);
    for (const std::string size : {"1k", "10k", "100k"})
        benchmark::RegisterBenchmark(("truncate_oldest_half/" + size).c_str(), truncate, size);
    benchmark::RegisterBenchmark("truncate_oldest_half_cut_only/100k", truncate_cut_only, std::string("100k"));
    for (const std::string size : {"1k", "10k", "100k"})
        benchmark::RegisterBenchmark(("budget_trim/half/" + size).c_str(), trim, size, true);
    for (const std::string size : {"1k", "10k", "100k"})
        benchmark::RegisterBenchmark(("budget_trim/32k/" + size).c_str(), trim, size, false);
    benchmark::RegisterBenchmark("budget_trim_cold/half/100k", trim_cold, std::string("100k"))->Unit(benchmark::kMicrosecond);
    benchmark::RegisterBenchmark("budget_trim_cold/floor_stream/100k", trim_cold_floor_stream, std::string("100k"))->Unit(benchmark::kMicrosecond);
    benchmark::RegisterBenchmark("budget_trim_cold/floor_touch/100k", trim_cold_floor_touch, std::string("100k"))->Unit(benchmark::kMicrosecond);
    return 0;
}();

} // namespace

BENCHMARK_MAIN();
