// tests/support/memory_fixtures.hpp -- what the memory tests share: quiet options, a manual clock, SCRIPTED
// embedders, the manager traits over any backend, and the golden data set loaded into a backend.
// SPDX-License-Identifier: MIT
#pragma once

#include <catch2/catch.hpp>

#include <chrono>
#include <map>
#include <memory>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

#include <ania/detail/timestamp.hpp>
#include <ania/json.hpp>
#include <ania/memory/manager.hpp>
#include <ania/memory/manager-inl.hpp>  // managers over the test traits (compiled mode: the library has the shipped ones)
#include <ania/memory/ram_backend.hpp>
#include <ania/testing/memory_backend.hpp>

#include "bench_data.hpp"

namespace ania_test {

inline ania::memory::manager_options quiet_options() {
    ania::memory::manager_options o;
    o.log = [](ania::log_level, std::string_view) {};
    o.seed = 42;
    return o;
}

struct manual_clock {
    std::chrono::system_clock::time_point t = std::chrono::system_clock::time_point{} + std::chrono::seconds(1'750'000'000);
    std::chrono::system_clock::time_point now() const { return t; }
};

/// A SCRIPTED embedder: a bag-of-characters vector, or "unavailable" when switched off.
struct scripted_embedder {
    std::shared_ptr<bool> available = std::make_shared<bool>(true);
    std::shared_ptr<int> calls = std::make_shared<int>(0);
    std::optional<std::vector<float>> embed(std::string_view text) const {
        ++*calls;
        if (!*available) return std::nullopt;
        std::vector<float> v(16, 0.0f);
        for (const unsigned char c : text) v[c % 16] += 1.0f;
        return v;
    }
};
static_assert(ania::memory::embedder<scripted_embedder>);

/// A SCRIPTED embedder: each text's vector is given by the test; any other text gets (0, 1).
struct fixed_embedder {
    std::shared_ptr<std::map<std::string, std::vector<float>, std::less<>>> vectors =
        std::make_shared<std::map<std::string, std::vector<float>, std::less<>>>();
    std::optional<std::vector<float>> embed(std::string_view text) const {
        const auto it = vectors->find(text);
        return it == vectors->end() ? std::vector<float>{0.0f, 1.0f} : it->second;
    }
};

/// The manager's traits for tests: a manual clock, on `Backend`, with `Embedder`.
template <class Backend = ania::memory::ram_backend, class Embedder = ania::memory::no_embedder>
struct test_memory_traits : ania::memory::default_memory_traits {
    using backend = Backend;
    using clock = manual_clock;
    using embedder = Embedder;
};
template <class Backend = ania::memory::ram_backend, class Embedder = ania::memory::no_embedder>
using test_manager = ania::memory::basic_manager<test_memory_traits<Backend, Embedder>>;

inline const ania::memory::scope g1 = ania::memory::scope::from("g:1");
inline const ania::memory::scope g2 = ania::memory::scope::from("g:2");

/// A fresh backend made by its conformance fixture, which lives as long (a temporary directory, a schema).
template <class Backend>
struct backend_rig {
    ania::testing::memory_backend_fixture<Backend> fixture;
    std::unique_ptr<Backend> owned = fixture.make();
    Backend& b = *owned;
};

/// The data set's memory_scopes, written into a fresh backend (its conformance fixture makes it) in file order.
template <class Backend = ania::memory::ram_backend>
struct golden_memories {
    backend_rig<Backend> rig;
    Backend& backend = rig.b;
    std::map<std::string, std::vector<std::string>> ids;  // scope -> ids in file order
    golden_memories() {
        for (const auto& line : load_lines("memory_scopes")) {
            const ania::json j = ania::parse_json(line);
            ania::memory::entry e;
            e.id = j.at("id").get<std::string>();
            e.user_id = j.at("user_id").get<std::string>();
            e.content = j.at("content").get<std::string>();
            for (const auto& t : j.at("tags")) e.tags.push_back(t.get<std::string>());
            const auto s = ania::memory::scope::from(j.at("scope").get<std::string>());
            // The reference semantics index a scope's entries in file order, which is not the order of the
            // data set's created_at values; ania keeps a scope oldest first, so the entries get fixed-width
            // times in file order.
            e.created_at = ania::detail::utc_timestamp(std::chrono::system_clock::time_point{} +
                                                       std::chrono::seconds(1'700'000'000 + ids[s.str()].size()));
            backend.insert(s, e);
            ids[s.str()].push_back(e.id);
        }
    }
};

/// Calls `check(want, item, scope)` for each line of golden file `golden`: `want` is the golden line, `item`
/// the line `want["i"]` of data file `items`, `scope` want's scope. Every item must have its golden line.
template <class Check>
void for_each_golden(const char* golden, const char* items, Check check) {
    const auto lines = load_lines(items);
    std::istringstream in(load_golden(golden));
    std::size_t checked = 0;
    for (std::string line; std::getline(in, line); ++checked) {
        const ania::json want = ania::parse_json(line);
        const ania::json item = ania::parse_json(lines.at(want.at("i").get<std::size_t>()));
        check(want, item, ania::memory::scope::from(want.at("scope").get<std::string>()));
    }
    CHECK(checked == lines.size());  // one golden line per item
}

/// Every candidate's near-duplicate check against golden/dedup_golden.jsonl.
template <class Manager, class Backend>
void check_dedup_golden(Manager& m, golden_memories<Backend>& g) {
    for_each_golden("dedup_golden.jsonl", "candidates", [&](const ania::json& want, const ania::json& cand, const ania::memory::scope& s) {
        const auto rep = m.near_duplicate(s, cand.at("content").get<std::string>());
        INFO("candidate " << want.at("i") << " " << cand.at("content"));
        REQUIRE(rep.best);
        CHECK(rep.best->id == want.at("best_id").get<std::string>());
        CHECK(g.ids[s.str()].at(rep.best->index) == rep.best->id);
        CHECK(rep.best->index == want.at("best_index").get<std::size_t>());
        CHECK(rep.best->score == Approx(want.at("dice").get<double>()).margin(1e-6));
        CHECK(rep.is_duplicate == want.at("is_dup").get<bool>());
    });
}

/// Every query's keyword search (every hit) against golden/search_golden.jsonl.
template <class Manager>
void check_search_golden(Manager& m) {
    for_each_golden("search_golden.jsonl", "queries", [&](const ania::json& want, const ania::json& q, const ania::memory::scope& s) {
        const std::string query = q.at("query").get<std::string>();
        std::vector<std::string> terms;
        for (const auto& t : want.at("terms")) terms.push_back(t.get<std::string>());
        CHECK(ania::memory::tokenize(query) == terms);
        std::vector<std::pair<std::size_t, double>> got, expected;
        for (const auto& h : m.search(s, query)) got.emplace_back(h.index, h.score);
        for (const auto& h : want.at("hits")) expected.emplace_back(h.at(0).get<std::size_t>(), h.at(1).get<double>());
        INFO("query " << want.at("i") << " " << query);
        CHECK(got == expected);
    });
}

} // namespace ania_test
