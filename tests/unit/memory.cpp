// tests/unit/memory.cpp -- long-term memory: tokenizer, the golden dedup and search results, every save /
// update / search / forget rule, the tools (bound scope, bad arguments), embeddings, injection, storage, admin.
#include <catch2/catch.hpp>

#include <map>
#include <random>
#include <set>

#include <ania/detail/timestamp.hpp>

#include <ania/memory/admin.hpp>
#include <ania/memory/manager.hpp>
#include <ania/memory/ram_backend.hpp>
#include <ania/memory/tools.hpp>
#ifdef ANIA_TEST_SQLITE
#include <ania/memory/sqlite_backend.hpp>
#include <sqlite3.h>
#endif

#include "bench_data.hpp"
#include "temp_dir.hpp"

using namespace ania::memory;
using ania::json;

namespace {

manager_options quiet_options() {
    manager_options o;
    o.log = [](ania::log_level, std::string_view) {};
    o.seed = 42;
    return o;
}

/// The data set names one scope "f:qq:20001", which SPEC §4's ^[gf]:\d+$ rejects (ania's scope type too);
/// its entries are used under "f:20001". Results depend only on the entries of a scope, not on its name.
scope data_scope(const std::string& name) {
    if (name.rfind("f:qq:", 0) == 0) return scope::from("f:" + name.substr(5));
    return scope::from(name);
}

/// The shared memory_scopes data set, loaded into a backend in file order.
struct golden_memories {
    ram_backend backend;
    std::map<std::string, std::vector<std::string>> ids;  // scope -> ids in file order
    golden_memories() {
        for (const auto& line : ania_test::load_lines("memory_scopes")) {
            const json j = ania::parse_json(line);
            entry e;
            e.id = j.at("id").get<std::string>();
            e.user_id = j.at("user_id").get<std::string>();
            e.content = j.at("content").get<std::string>();
            for (const auto& t : j.at("tags")) e.tags.push_back(t.get<std::string>());
            const scope s = data_scope(j.at("scope").get<std::string>());
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

std::vector<std::string> toks(std::string_view s) { return tokenize(s); }

} // namespace

TEST_CASE("the tokenizer follows the reference semantics", "[memory][tokenize]") {
    CHECK(toks("Hello, World! hello") == std::vector<std::string>{"hello", "world"});
    CHECK(toks("群规") == std::vector<std::string>{"群规", "群", "规"});
    CHECK(toks("里发链") == std::vector<std::string>{"里发", "发链", "里", "发", "链"});
    CHECK(toks("止在群里") == std::vector<std::string>{"止在", "在群", "群里"});
    CHECK(toks("猫") == std::vector<std::string>{"猫"});
    CHECK(toks("小明喜欢Python3和C++") == std::vector<std::string>{"小明", "明喜", "喜欢", "python3", "和", "c"});
    CHECK(toks("，。！？「」") .empty());
    CHECK(toks("Ünïcödé ΑΒΓ Привет") == std::vector<std::string>{"ünïcödé", "αβγ", "привет"});
    CHECK(toks("ｆｕｌｌ") == std::vector<std::string>{"ｆｕｌｌ"});  // full-width letters are letters, lower-cased
    CHECK(normalize_for_dedup("  Ｈｅｌｌｏ　 World ") == "hello world");
}

TEST_CASE("near-duplicate checks equal golden/dedup_golden.jsonl", "[memory][golden]") {
    golden_memories g;
    memory_manager<ram_backend> m(g.backend, quiet_options());
    const auto candidates = ania_test::load_lines("candidates");
    std::istringstream golden(ania_test::load_golden("dedup_golden.jsonl"));
    std::string line;
    std::size_t checked = 0;
    while (std::getline(golden, line)) {
        const json want = ania::parse_json(line);
        const json cand = ania::parse_json(candidates.at(want.at("i").get<std::size_t>()));
        const scope s = data_scope(want.at("scope").get<std::string>());
        const auto rep = m.near_duplicate(s, cand.at("content").get<std::string>());
        INFO("candidate " << want.at("i") << " " << cand.at("content"));
        REQUIRE(rep.best);
        CHECK(rep.best->id == want.at("best_id").get<std::string>());
        CHECK(g.ids[s.str()].at(rep.best->index) == rep.best->id);
        CHECK(rep.best->index == want.at("best_index").get<std::size_t>());
        CHECK(rep.best->score == Approx(want.at("dice").get<double>()).margin(1e-6));
        CHECK(rep.is_duplicate == want.at("is_dup").get<bool>());
        ++checked;
    }
    CHECK(checked == 1000);
}

TEST_CASE("keyword search equals golden/search_golden.jsonl", "[memory][golden]") {
    golden_memories g;
    auto opt = quiet_options();
    opt.max_search_limit = 1000;
    memory_manager<ram_backend> m(g.backend, opt);
    const auto queries = ania_test::load_lines("queries");
    std::istringstream golden(ania_test::load_golden("search_golden.jsonl"));
    std::string line;
    std::size_t checked = 0;
    while (std::getline(golden, line)) {
        const json want = ania::parse_json(line);
        const json q = ania::parse_json(queries.at(want.at("i").get<std::size_t>()));
        const scope s = data_scope(want.at("scope").get<std::string>());
        const std::string query = q.at("query").get<std::string>();
        std::vector<std::string> terms;
        for (const auto& t : want.at("terms")) terms.push_back(t.get<std::string>());
        CHECK(tokenize(query) == terms);
        const auto hits = m.search(s, query, 1000);
        std::vector<std::pair<std::size_t, double>> got, expected;
        for (const auto& h : hits) got.emplace_back(h.index, h.score);
        for (const auto& h : want.at("hits")) expected.emplace_back(h.at(0).get<std::size_t>(), h.at(1).get<double>());
        INFO("query " << want.at("i") << " " << query);
        CHECK(got == expected);
        ++checked;
    }
    CHECK(checked == 1000);
}
