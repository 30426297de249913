// bench/memory.cpp -- long-term memory on the shared data set (one scope of 200 entries). Fixed names:
//   near_dup_check/200          one candidate against the scope (tokenising the candidate included)
//   keyword_score/200           one query scored against every entry
//   keyword_score_embed1024/200 the same with 1024-d vectors on every entry and the query
//   memory_index_build/200      indexing the scope from its entries (vocabulary, tokens, postings, filters, norms)
//   memory_scope_load/200       first use of a scope: ram_backend's copy of the entries, then the index
#include <benchmark/benchmark.h>

#include <random>
#include <string>
#include <vector>

#include <ania/json.hpp>
#include <ania/memory/manager.hpp>
#include <ania/memory/ram_backend.hpp>

#include "bench_data.hpp"

namespace {

using namespace ania::memory;

const scope bench_scope = scope::from("g:100001");

struct fixed_embedder {  // SCRIPTED: the same 1024-d vector for every text
    std::vector<float> v;
    std::optional<std::vector<float>> embed(std::string_view) const { return v; }
};
struct embedding_traits : ania::memory::default_memory_traits {
    using embedder = fixed_embedder;
};

std::vector<float> random_vector(std::mt19937& rng) {
    std::normal_distribution<float> d;
    std::vector<float> v(1024);
    for (float& x : v) x = d(rng);
    return v;
}

ram_backend& backend(bool with_vectors) {
    static ram_backend plain, vectors;
    static const bool loaded = [] {
        std::mt19937 rng(3);
        std::size_t i = 0;
        for (const auto& line : ania_test::load_lines("memory_scopes")) {
            const ania::json j = ania::parse_json(line);
            if (j.at("scope") != bench_scope.str()) continue;
            entry e;
            e.id = j.at("id").get<std::string>();
            e.user_id = j.at("user_id").get<std::string>();
            e.content = j.at("content").get<std::string>();
            for (const auto& t : j.at("tags")) e.tags.push_back(t.get<std::string>());
            e.created_at = ania::detail::utc_timestamp(std::chrono::system_clock::time_point{} + std::chrono::seconds(1'700'000'000 + i++));
            plain.insert(bench_scope, e);
            e.embedding = random_vector(rng);
            vectors.insert(bench_scope, e);
        }
        return true;
    }();
    (void)loaded;
    return with_vectors ? vectors : plain;
}

std::vector<std::string> texts_of(const char* file, const char* field) {
    std::vector<std::string> out;
    for (const auto& line : ania_test::load_lines(file)) {
        const ania::json j = ania::parse_json(line);
        if (j.at("scope") == bench_scope.str()) out.push_back(j.at(field).get<std::string>());
    }
    return out;
}

manager_options quiet() {
    manager_options o;
    o.log = [](ania::log_level, std::string_view) {};
    return o;
}

void near_dup_check(benchmark::State& state) {
    manager m(backend(false), quiet());
    const auto candidates = texts_of("candidates", "content");
    m.size(bench_scope);
    std::size_t i = 0;
    for (auto _ : state) benchmark::DoNotOptimize(m.near_duplicate(bench_scope, candidates[i++ % candidates.size()]));
}
BENCHMARK(near_dup_check)->Name("near_dup_check/200");

void keyword_score(benchmark::State& state) {
    manager m(backend(false), quiet());
    const auto queries = texts_of("queries", "query");
    m.size(bench_scope);
    std::size_t i = 0;
    for (auto _ : state) benchmark::DoNotOptimize(m.scores(bench_scope, queries[i++ % queries.size()]));
}
BENCHMARK(keyword_score)->Name("keyword_score/200");

void keyword_score_embed(benchmark::State& state) {
    std::mt19937 rng(9);
    basic_manager<embedding_traits> m(backend(true), quiet(), {.embedder = fixed_embedder{random_vector(rng)}});
    const auto queries = texts_of("queries", "query");
    m.size(bench_scope);
    std::size_t i = 0;
    for (auto _ : state) benchmark::DoNotOptimize(m.scores(bench_scope, queries[i++ % queries.size()]));
}
BENCHMARK(keyword_score_embed)->Name("keyword_score_embed1024/200");

void index_build(benchmark::State& state) {
    manager m(backend(false), quiet());
    m.size(bench_scope);
    for (auto _ : state) {
        m.reindex(bench_scope);  // vocabulary, every entry, postings: all but reading the backend
        benchmark::DoNotOptimize(m.size(bench_scope));
    }
}
BENCHMARK(index_build)->Name("memory_index_build/200")->Unit(benchmark::kMicrosecond);

void scope_load(benchmark::State& state) {
    manager m(backend(false), quiet());
    for (auto _ : state) {
        m.reload(bench_scope);
        benchmark::DoNotOptimize(m.size(bench_scope));  // the backend's copy of the entries, then the index
    }
}
BENCHMARK(scope_load)->Name("memory_scope_load/200")->Unit(benchmark::kMicrosecond);

} // namespace

BENCHMARK_MAIN();
