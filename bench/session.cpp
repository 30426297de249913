// bench/session.cpp -- the session cache's hot paths (SPEC §3): touching a resident session from two threads,
// and a janitor tick over 10,000 sessions that evicts nothing (none: the policy's prescreen sees that nothing
// can be idle; none_scan: a policy without one, every session looked at) / evicts all but the 128 most recent
// (the agents' destruction included: janitor_tick/10k/lru128_destroy_only measures that part alone).
// The agents are real (ram_store history, a SCRIPTED client that is never called here).
#include <benchmark/benchmark.h>

#include <memory>
#include <string>
#include <vector>

#include <ania/ania.hpp>
#include <ania/session/manual_clock.hpp>
#include <ania/session/session_cache.hpp>

namespace {

struct never_called_client {
    ania::completion complete(const ania::chat_request&) { return ania::completion::failure("not called"); }
};
struct traits : ania::default_agent_traits {
    using client = never_called_client;
};
using agent_t = ania::basic_agent<traits>;

/// The default policy without its prescreen: every tick scans (what a user's policy without may_select gets).
struct always_scan {
    ania::idle_then_lru inner;
    explicit always_scan(const ania::session_limits& l) : inner(l) {}
    void select(std::span<const ania::resident_session> s, std::int64_t now, std::vector<ania::eviction_choice>& out) const {
        inner.select(s, now, out);
    }
};

template <class Eviction = ania::idle_then_lru>
struct world {
    using cache_t = ania::session_cache<agent_t, Eviction, ania::manual_clock>;
    ania::ram_store store;
    ania::background_writer<ania::ram_store> writer{store};
    ania::manual_clock clock;
    std::shared_ptr<const ania::agent_options> bot = std::make_shared<const ania::agent_options>();  // shared by every session, as the README's
    std::unique_ptr<cache_t> cache;
    std::vector<std::string> keys;

    world(std::size_t n, ania::session_limits limits) {
        ania::session_options o;
        o.limits = limits;
        o.janitor = false;
        cache = std::make_unique<cache_t>(
            [this](const std::string& key) {
                return std::make_unique<agent_t>(writer, agent_t::parts{.client = {}}, bot, key);
            },
            o, clock);
        for (std::size_t i = 0; i < n; ++i) keys.push_back("g:" + std::to_string(100000 + i));
        fill();
    }
    void fill() {
        for (const std::string& k : keys) {
            clock.advance(std::chrono::microseconds(1));
            cache->with_agent(k, [](agent_t&) {});
        }
    }
};

void session_touch(benchmark::State& state) {
    static world<>* w = nullptr;
    if (state.thread_index() == 0) w = new world<>(128, {});
    std::size_t i = static_cast<std::size_t>(state.thread_index()) * 61;
    for (auto _ : state) {
        benchmark::DoNotOptimize(w->cache->touch(w->keys[i % 128]));
        ++i;
    }
    if (state.thread_index() == 0) {
        delete w;
        w = nullptr;
    }
}
BENCHMARK(session_touch)->Name("session_touch/contended")->Threads(2)->UseRealTime();

void tick_none(benchmark::State& state) {
    world<> w(10000, {.max_idle = std::chrono::minutes(120), .max_sessions = 0});
    for (auto _ : state) benchmark::DoNotOptimize(w.cache->tick());
}
BENCHMARK(tick_none)->Name("janitor_tick/10k/none")->Unit(benchmark::kMicrosecond);

// The same tick when the policy cannot prescreen (or the bound is stale): the 10,000 sessions are scanned.
void tick_none_scan(benchmark::State& state) {
    world<always_scan> w(10000, {.max_idle = std::chrono::minutes(120), .max_sessions = 0});
    for (auto _ : state) benchmark::DoNotOptimize(w.cache->tick());
}
BENCHMARK(tick_none_scan)->Name("janitor_tick/10k/none_scan")->Unit(benchmark::kMicrosecond);

void tick_lru(benchmark::State& state) {
    world<> w(10000, {.max_idle = std::chrono::minutes(0), .max_sessions = 128});
    for (auto _ : state) {
        benchmark::DoNotOptimize(w.cache->tick());
        state.PauseTiming();
        w.fill();
        state.ResumeTiming();
    }
}
BENCHMARK(tick_lru)->Name("janitor_tick/10k/lru128")->Unit(benchmark::kMicrosecond);

// The destruction part of lru128 alone: 9,872 agents like those the tick drops.
void destroy_only(benchmark::State& state) {
    ania::ram_store store;
    ania::background_writer<ania::ram_store> writer(store);
    const auto bot = std::make_shared<const ania::agent_options>();
    for (auto _ : state) {
        state.PauseTiming();
        std::vector<std::unique_ptr<agent_t>> agents;
        for (int i = 0; i < 9872; ++i) {
            agents.push_back(std::make_unique<agent_t>(writer, agent_t::parts{.client = {}}, bot, "g:" + std::to_string(i)));
            benchmark::DoNotOptimize(agents.back()->window().size());
        }
        state.ResumeTiming();
        agents.clear();
    }
}
BENCHMARK(destroy_only)->Name("janitor_tick/10k/lru128_destroy_only")->Unit(benchmark::kMicrosecond);

} // namespace

BENCHMARK_MAIN();
