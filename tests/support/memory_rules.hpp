// tests/support/memory_rules.hpp -- SPEC §4's memory rules and the golden results, over every backend of the
// test program: save / update / search / inject / the tools / the admin source, each through a manager on a
// fresh backend of each type. Include it once per program after declaring the backends (and, for each one
// that is not default-constructible, an ania::testing::memory_backend_fixture):
//     using memory_rule_backends = std::tuple<ania::memory::ram_backend, ania::memory::sqlite_backend>;
//     #include "memory_rules.hpp"
#pragma once

#include <algorithm>
#include <map>
#include <random>
#include <set>

#include <ania/config.hpp>
#include <ania/memory/admin.hpp>
#include <ania/memory/tools.hpp>
#include <ania/text/utf8.hpp>

#include "memory_fixtures.hpp"

TEMPLATE_LIST_TEST_CASE("near-duplicate checks equal golden/dedup_golden.jsonl", "[memory][golden]", memory_rule_backends) {
    ania_test::golden_memories<TestType> g;
    ania_test::test_manager<TestType> m(g.backend, ania_test::quiet_options());
    ania_test::check_dedup_golden(m, g);
}

TEMPLATE_LIST_TEST_CASE("keyword search equals golden/search_golden.jsonl", "[memory][golden]", memory_rule_backends) {
    ania_test::golden_memories<TestType> g;
    ania_test::test_manager<TestType> m(g.backend, ania_test::quiet_options());
    ania_test::check_search_golden(m);
}

TEMPLATE_LIST_TEST_CASE("save: trim, cap at 2000 runes, empty is an error", "[memory][save]", memory_rule_backends) {
    using namespace ania::memory;
    using namespace ania_test;
    backend_rig<TestType> r;
    test_manager<TestType> m(r.b, quiet_options());
    auto s = m.save(g1, "  \n 小明喜欢美式咖啡 \t ");
    REQUIRE(s.status == save_status::saved);
    CHECK(s.saved.content == "小明喜欢美式咖啡");
    CHECK(s.saved.id.size() == 8);
    CHECK(s.saved.id.find_first_not_of("0123456789abcdef") == std::string::npos);
    CHECK(s.saved.created_at.size() == 30);
    std::string long_text;
    for (int i = 0; i < 2100; ++i) long_text += (i % 2 ? "字" : "😀");
    s = m.save(g1, long_text);
    REQUIRE(s.status == save_status::saved);
    CHECK(ania::text::rune_count(s.saved.content) == 2000);
    CHECK(ania::text::is_valid_utf8(s.saved.content));
    CHECK(m.save(g1, " \n\t\xE3\x80\x80 ").status == save_status::empty);
    CHECK(m.save(g1, "").status == save_status::empty);
    CHECK(r.b.load(g1).size() == 2);  // what the backend holds, read back
    CHECK(r.b.load(g1).back().content == s.saved.content);
}

TEMPLATE_LIST_TEST_CASE("save: exact duplicates after folding white space are not written (SPEC §4)", "[memory][save]", memory_rule_backends) {
    using namespace ania::memory;
    using namespace ania_test;
    backend_rig<TestType> r;
    test_manager<TestType> m(r.b, quiet_options());
    const auto first = m.save(g1, "Alice likes  green tea");
    for (const char* same : {"Alice likes green tea", "  Alice\tlikes\n green   tea ", "Alice\xE3\x80\x80likes green tea"}) {
        const auto s = m.save(g1, same);
        INFO(same);
        CHECK(s.status == save_status::exact_duplicate);
        CHECK(s.saved.id == first.saved.id);
    }
    CHECK(m.list(g1).size() == 1);
    // Case and full-width forms are content: by default these are other memories (near duplicates).
    for (const char* other : {"alice likes green tea", "ALICE LIKES GREEN TEA", "Ａｌｉｃｅ likes green tea"}) {
        INFO(other);
        CHECK(m.save(g1, other).status != save_status::exact_duplicate);
    }
    CHECK(m.list(g1).size() == 4);
    CHECK(r.b.load(g1).size() == 4);
    CHECK(m.save(g2, "Alice likes green tea").status == save_status::saved);  // another scope is another memory
}

TEMPLATE_LIST_TEST_CASE("save: width_and_case folding (opt-in) also folds case and full-width forms", "[memory][save]", memory_rule_backends) {
    using namespace ania::memory;
    using namespace ania_test;
    backend_rig<TestType> r;
    auto opt = quiet_options();
    opt.exact_fold = exact_duplicate_fold::width_and_case;
    test_manager<TestType> m(r.b, opt);
    const auto first = m.save(g1, "Alice likes  green tea");
    for (const char* same : {"alice likes green tea", "  ALICE\tLIKES\n green   TEA ", "Ａｌｉｃｅ　ｌｉｋｅｓ green tea"}) {
        const auto s = m.save(g1, same);
        INFO(same);
        CHECK(s.status == save_status::exact_duplicate);
        CHECK(s.saved.id == first.saved.id);
    }
    CHECK(m.list(g1).size() == 1);
    // The configuration key selects it.
    CHECK(ania::from_config<manager_options>(ania::parse_config(R"({"memory":{"fold_case_and_width":true}})")).exact_fold ==
          exact_duplicate_fold::width_and_case);
    CHECK(ania::from_config<manager_options>(ania::config{}).exact_fold == exact_duplicate_fold::white_space);
}

TEMPLATE_LIST_TEST_CASE("save: a near duplicate is written and reported with the similar entries", "[memory][save]", memory_rule_backends) {
    using namespace ania::memory;
    using namespace ania_test;
    backend_rig<TestType> r;
    test_manager<TestType> m(r.b, quiet_options());
    const auto a = m.save(g1, "小明在杭州工作，是一名程序员，平时喜欢爬山。");
    const auto s = m.save(g1, "小明在杭州工作，是程序员，周末喜欢爬山。");
    REQUIRE(s.status == save_status::saved_near_duplicate);
    REQUIRE_FALSE(s.similar.empty());
    CHECK(s.similar[0].id == a.saved.id);
    CHECK(s.similar[0].score >= 0.55);
    CHECK(m.list(g1).size() == 2);
    const auto tools = make_tools(m, g1);
    const std::string reply = tools[0].handler(R"({"content":"小明在杭州工作，是一名程序员，喜欢爬山。"})");
    CHECK(reply.find("memory_update") != std::string::npos);
    CHECK(reply.find("memory_forget") != std::string::npos);
    CHECK(reply.find(a.saved.id) != std::string::npos);
}

TEMPLATE_LIST_TEST_CASE("save: a full scope refuses and tells the model to clean up or merge", "[memory][save]", memory_rule_backends) {
    using namespace ania::memory;
    using namespace ania_test;
    backend_rig<TestType> r;
    auto opt = quiet_options();
    opt.max_entries = 5;
    test_manager<TestType> m(r.b, opt);
    for (int i = 0; i < 5; ++i) REQUIRE(m.save(g1, "fact number " + std::string(1, static_cast<char>('a' + i)) + " about topic " + std::to_string(i * 7919)).status != save_status::full);
    CHECK(m.save(g1, "one more fact").status == save_status::full);
    CHECK(m.save(g1, "fact number a about topic 0").status == save_status::exact_duplicate);  // still found
    const auto reply = make_tools(m, g1)[0].handler(R"({"content":"yet another"})");
    CHECK(reply.find("上限 5 条") != std::string::npos);
    CHECK(reply.find("memory_forget") != std::string::npos);
    CHECK(r.b.load(g1).size() == 5);
    CHECK(m.save(g2, "other scope has room").status == save_status::saved);
}

TEMPLATE_LIST_TEST_CASE("save: id collisions are retried, never overwritten", "[memory][save]", memory_rule_backends) {
    using namespace ania::memory;
    using namespace ania_test;
    backend_rig<TestType> r;
    auto opt = quiet_options();
    opt.seed = 7;
    std::string first_id;
    {
        test_manager<TestType> probe(r.b, opt);
        first_id = probe.save(g1, "first").saved.id;  // what seed 7 draws first
    }
    test_manager<TestType> m(r.b, opt);  // draws the same id first, which the backend already holds
    const auto s = m.save(g1, "new one");
    REQUIRE(s.status == save_status::saved);
    CHECK(s.saved.id != first_id);
    CHECK(m.get(g1, first_id)->content == "first");
    CHECK(r.b.load(g1).size() == 2);
}

TEMPLATE_LIST_TEST_CASE("update: absent fields kept, empty ones cleared, content change re-embeds, created_at kept", "[memory][update]", memory_rule_backends) {
    using namespace ania::memory;
    using namespace ania_test;
    backend_rig<TestType> rig;
    scripted_embedder emb;
    test_manager<TestType, scripted_embedder> m(rig.b, quiet_options(), {.embedder = emb});
    const auto saved = m.save(g1, "Bob plays chess", "qq:1", {"hobby", "game"}).saved;
    REQUIRE_FALSE(saved.embedding.empty());
    auto r = m.update(g1, saved.id, std::nullopt, std::nullopt, std::nullopt);
    CHECK(r.status == update_status::updated);
    CHECK(r.updated == saved);
    r = m.update(g1, saved.id, std::string_view("Bob plays go"), std::nullopt, std::nullopt);
    CHECK(r.updated.content == "Bob plays go");
    CHECK(r.updated.user_id == "qq:1");
    CHECK(r.updated.tags == std::vector<std::string>{"hobby", "game"});
    CHECK(r.updated.embedding != saved.embedding);
    CHECK(r.updated.created_at == saved.created_at);
    CHECK(rig.b.load(g1) == std::vector<entry>{r.updated});  // stored as returned
    r = m.update(g1, saved.id, std::nullopt, std::string_view(""), std::vector<std::string>{});
    CHECK(r.updated.user_id.empty());
    CHECK(r.updated.tags.empty());
    CHECK(m.update(g1, "deadbeef", std::string_view("x"), std::nullopt, std::nullopt).status == update_status::not_found);
    CHECK(m.update(g1, saved.id, std::string_view("   "), std::nullopt, std::nullopt).status == update_status::empty);
    CHECK(m.get(g1, saved.id)->content == "Bob plays go");
    // The index follows: the old word scores only by vector similarity (<= 40), the new one by keyword too.
    const auto chess = m.search(g1, "chess");
    REQUIRE(chess.size() == 1);
    CHECK(chess[0].score <= 40.0);
    const auto go = m.search(g1, "go");
    REQUIRE(go.size() == 1);
    CHECK(go[0].score > 10.0);
}

TEMPLATE_LIST_TEST_CASE("search: everything newest first without a query; scored, filtered, limited with one", "[memory][search]", memory_rule_backends) {
    using namespace ania::memory;
    using namespace ania_test;
    backend_rig<TestType> r;
    manual_clock clock;
    test_manager<TestType> m(r.b, quiet_options(), {.clock = clock});
    const auto a = m.save(g1, "Carol likes coffee", "", {"drink"}).saved;
    (void)m.save(g1, "Dave likes tea");
    const auto d = m.save(g1, "Coffee machine is broken", "", {"office", "coffee"}).saved;
    const auto all = m.search(g1, "");
    REQUIRE(all.size() == 3);
    CHECK(all[0].item.id == d.id);  // same clock: insertion order is still kept by the timestamps
    CHECK(all[2].item.id == a.id);
    const auto hits = m.search(g1, "coffee");
    REQUIRE(hits.size() == 2);
    CHECK(hits[0].item.id == d.id);  // content +10, tag "coffee" +20
    CHECK(hits[0].score == 30);
    CHECK(hits[1].score == 10);
    CHECK(m.search(g1, "coffee", 1).size() == 1);
    CHECK(m.search(g1, "", 2).size() == 2);
    CHECK(m.search(g1, "nothing matches").empty());
    CHECK(m.search(g1, "likes").size() == 2);  // substring of the content, not only a token
    // A second manager over the same rows (a restart) finds the same, in the same order.
    test_manager<TestType> again(r.b, quiet_options(), {.clock = clock});
    const auto hits2 = again.search(g1, "coffee");
    REQUIRE(hits2.size() == 2);
    CHECK(hits2[0].item == hits[0].item);
    CHECK(hits2[1].item == hits[1].item);
}

TEMPLATE_LIST_TEST_CASE("search: every entry of a full scope without a query, every hit with one (SPEC §4)", "[memory][search]", memory_rule_backends) {
    using namespace ania::memory;
    using namespace ania_test;
    backend_rig<TestType> r;
    test_manager<TestType> m(r.b, quiet_options());
    for (int i = 0; i < 200; ++i) {
        const auto st = m.save(g1, "fact number " + std::to_string(i) + (i % 4 == 0 ? " about tea" : " about work")).status;
        REQUIRE((st == save_status::saved || st == save_status::saved_near_duplicate));  // similar facts: written too
    }
    const auto all = m.search(g1, "");
    REQUIRE(all.size() == 200);
    CHECK(all.front().item.content.rfind("fact number 199 ", 0) == 0);  // newest first
    CHECK(m.search(g1, "tea").size() == 50);
    // The tool gives the model all of them too; a limit the model passes is honoured, any size.
    const auto tools = make_tools(m, g1);
    const auto& search = tools[1];
    REQUIRE(search.name == "memory_search");
    const auto count_lines = [](const std::string& reply) { return std::count(reply.begin(), reply.end(), '\n'); };
    CHECK(count_lines(search.handler("{}")) == 200);
    CHECK(count_lines(search.handler(R"({"query":"tea"})")) == 50);
    CHECK(count_lines(search.handler(R"({"query":"tea","limit":7})")) == 7);
    CHECK(count_lines(search.handler(R"({"limit":18446744073709551615})")) == 200);
    for (const char* bad : {R"({"limit":0})", R"({"limit":-3})", R"({"limit":2.5})", R"({"limit":"9"})"}) {
        INFO(bad);
        CHECK(search.handler(bad).find("limit must be a positive integer") != std::string::npos);
    }
}

TEMPLATE_LIST_TEST_CASE("embeddings: a bonus when present, keywords only when the embedder fails, backfilled later", "[memory][embed]", memory_rule_backends) {
    using namespace ania::memory;
    using namespace ania_test;
    backend_rig<TestType> rig;
    scripted_embedder emb;
    test_manager<TestType, scripted_embedder> m(rig.b, quiet_options(), {.embedder = emb});
    *emb.available = false;
    const auto r = m.save(g1, "Erin uses vim");
    REQUIRE(r.status == save_status::saved);  // silently keyword-only
    CHECK(r.saved.embedding.empty());
    const auto plain = m.search(g1, "vim");
    REQUIRE(plain.size() == 1);
    CHECK(plain[0].score == 10);
    *emb.available = true;
    CHECK(m.backfill(10) == 1);
    CHECK_FALSE(m.get(g1, r.saved.id)->embedding.empty());
    CHECK(rig.b.load(g1)[0].embedding == m.get(g1, r.saved.id)->embedding);  // stored too, exactly
    const auto boosted = m.search(g1, "vim");
    REQUIRE(boosted.size() == 1);
    CHECK(boosted[0].score > 10);
    CHECK(boosted[0].score <= 50);
    CHECK(m.backfill(10) == 0);
}

TEMPLATE_LIST_TEST_CASE("embeddings: the semantic bonus is floor(cosine x 40) when the cosine is positive, never a penalty", "[memory][embed]", memory_rule_backends) {
    using namespace ania::memory;
    using namespace ania_test;
    backend_rig<TestType> rig;
    fixed_embedder emb;
    auto& v = *emb.vectors;
    v["vim"] = {1.0f, 0.0f};
    v["Erin uses vim"] = {-1.0f, 0.1f};         // keyword hit, negative cosine: still 10
    v["Frank likes emacs"] = {0.5f, 0.8660254f};  // no keyword, cosine 0.5: 20
    v["Gina plays go"] = {0.01f, 0.99995f};     // no keyword, cosine 0.01: floor(0.4) = 0, dropped
    v["Hank likes chess"] = {-0.9f, 0.43589f};  // no keyword, negative cosine: dropped
    v["Ivy writes vim plugins"] = {0.6f, 0.8f};   // keyword and cosine 0.6: 10 + 24
    test_manager<TestType, fixed_embedder> m(rig.b, quiet_options(), {.embedder = emb});
    for (const char* t : {"Erin uses vim", "Frank likes emacs", "Gina plays go", "Hank likes chess", "Ivy writes vim plugins"})
        REQUIRE(m.save(g1, t).status == save_status::saved);
    const auto hits = m.search(g1, "vim");
    REQUIRE(hits.size() == 3);
    CHECK(hits[0].item.content == "Ivy writes vim plugins");
    CHECK(hits[0].score == 34);
    CHECK(hits[1].item.content == "Frank likes emacs");
    CHECK(hits[1].score == 20);
    CHECK(hits[2].item.content == "Erin uses vim");
    CHECK(hits[2].score == 10);
}

TEMPLATE_LIST_TEST_CASE("auto-inject: at most 3 entries even when more fit the rune budget; both caps configurable", "[memory][inject]", memory_rule_backends) {
    using namespace ania::memory;
    using namespace ania_test;
    backend_rig<TestType> r;
    const auto configured = [](const char* text) {
        auto o = ania::from_config<manager_options>(ania::parse_config(text));
        o.log = [](ania::log_level, std::string_view) {};
        return o;
    };
    const auto lines_of = [](const std::string& block) {
        std::size_t lines = 0;
        for (std::size_t at = block.find("\n- ["); at != std::string::npos; at = block.find("\n- [", at + 1)) ++lines;
        return lines;
    };
    const scope g3 = scope::from("g:3");
    test_manager<TestType> m(r.b, quiet_options());
    for (int i = 0; i < 6; ++i) m.save(g1, "咖啡 fact " + std::to_string(i));  // short: the runes never run out
    CHECK(lines_of(m.inject_block(g1, "咖啡?")) == 3);
    test_manager<TestType> five(r.b, configured(R"({"memory":{"inject_entries":5,"inject_runes":4000}})"));
    CHECK(five.options().inject_runes == 4000);
    for (int i = 0; i < 6; ++i) five.save(g2, "咖啡 fact " + std::to_string(i));
    CHECK(lines_of(inject_block(five, g2, "咖啡?")) == 5);
    test_manager<TestType> none(r.b, configured(R"({"memory":{"inject_entries":0}})"));  // nothing, not "no limit"
    none.save(g3, "咖啡 fact");
    CHECK(none.search(g3, "咖啡").size() == 1);
    CHECK(inject_block(none, g3, "咖啡?").empty());
}

TEMPLATE_LIST_TEST_CASE("auto-inject: long entries are cut to about 1500 runes, under a header that asks for corrections", "[memory][inject]", memory_rule_backends) {
    using namespace ania::memory;
    using namespace ania_test;
    backend_rig<TestType> r;
    test_manager<TestType> m(r.b, quiet_options());
    for (int i = 0; i < 6; ++i) m.save(g1, "咖啡 fact " + std::to_string(i) + " " + std::string(900, static_cast<char>('a' + i)));
    const std::string block = m.inject_block(g1, std::string(5000, 'x') + " 咖啡?");
    CHECK(block.rfind(std::string(default_inject_header), 0) == 0);
    CHECK(block.find("memory_update") != std::string::npos);
    std::size_t lines = 0;
    for (std::size_t at = block.find("\n- ["); at != std::string::npos; at = block.find("\n- [", at + 1)) ++lines;
    CHECK(lines >= 1);
    CHECK(lines <= 3);
    CHECK(ania::text::rune_count(block) <= 1500);
    CHECK(m.inject_block(g1, "nothing relevant here").empty());
}

TEMPLATE_LIST_TEST_CASE("tools: definitions, bound scope, clear errors for malformed arguments", "[memory][tools]", memory_rule_backends) {
    using namespace ania::memory;
    using namespace ania_test;
    backend_rig<TestType> r;
    test_manager<TestType> m(r.b, quiet_options());
    const auto tools = make_tools(m, g1);
    REQUIRE(tools.size() == 4);
    CHECK(tools[0].name == "memory_save");
    CHECK(tools[3].name == "memory_forget");
    const ania::json def = tools[0].definition();
    CHECK(def.at("type") == "function");
    CHECK(def.at("function").at("parameters").at("required") == ania::json::array({"content"}));
    CHECK(def.at("function").at("parameters").at("properties").at("tags").at("items").at("type") == "string");
    const auto call = [&](std::size_t t, std::string_view args) { return tools[t].handler(args); };
    CHECK(call(0, "{not json").find("参数无效") != std::string::npos);
    CHECK(call(0, "[1]").find("expected a JSON object") != std::string::npos);
    CHECK(call(0, R"({})").find("content is required") != std::string::npos);
    CHECK(call(0, R"({"content":5})").find("content must be a string") != std::string::npos);
    CHECK(call(0, R"({"content":"x","tags":"work"})").find("tags must be an array of strings") != std::string::npos);
    CHECK(call(0, R"({"content":"x","tags":[1,2]})").find("tags must be an array of strings") != std::string::npos);
    CHECK(call(1, R"({"limit":-3})").find("limit must be a positive integer") != std::string::npos);
    CHECK(call(2, R"({"content":"x"})").find("id is required") != std::string::npos);
    CHECK(call(3, std::string(100000, '[')).find("参数无效") != std::string::npos);  // nesting bomb
    CHECK(m.list(g1).empty());
    CHECK(r.b.load(g1).empty());
    const std::string saved = call(0, R"({"content":"Frank lives in Paris","user_id":"qq:9","tags":["city"]})");
    CHECK(saved.find("已保存记忆") != std::string::npos);
    const std::string id = m.list(g1).at(0).id;
    CHECK(call(1, R"({"query":"paris"})").find(id) != std::string::npos);
    CHECK(call(1, "").find(id) != std::string::npos);  // no arguments: everything
    CHECK(call(2, R"({"id":")" + id + R"(","content":"Frank lives in Lyon"})").find("Lyon") != std::string::npos);
    CHECK(r.b.load(g1).at(0).content == "Frank lives in Lyon");
    CHECK(call(3, R"({"id":")" + id + R"("})").find("已删除") != std::string::npos);
    CHECK(call(3, R"({"id":")" + id + R"("})").find("找不到") != std::string::npos);
    CHECK(r.b.load(g1).empty());
    const auto en = make_tools(m, g1, english_tool_replies());
    CHECK(en[0].handler(R"({"content":"   "})") == "Error: the memory content is empty.");
}

TEMPLATE_LIST_TEST_CASE("tools of one scope never read, edit or delete another scope's entries (property)", "[memory][tools][property]", memory_rule_backends) {
    using namespace ania::memory;
    using namespace ania_test;
    backend_rig<TestType> r;
    test_manager<TestType> m(r.b, quiet_options());
    const std::vector<scope> scopes = {scope::from("g:1"), scope::from("g:2"), scope::from("f:3")};
    std::vector<std::vector<ania::tool>> tools;
    for (const auto& s : scopes) tools.push_back(make_tools(m, s));
    std::mt19937 rng(11);
    std::vector<std::string> all_ids;
    for (int step = 0; step < 600; ++step) {
        const std::size_t who = rng() % scopes.size();
        const std::string marker = "scope" + std::to_string(who) + " secret " + std::to_string(step);
        switch (rng() % 4) {
        case 0: tools[who][0].handler(ania::json{{"content", marker}}.dump()); break;
        case 1: {
            const std::string out = tools[who][1].handler(R"({"limit":50})");
            for (std::size_t other = 0; other < scopes.size(); ++other)
                if (other != who) CHECK(out.find("scope" + std::to_string(other) + " secret") == std::string::npos);
            break;
        }
        case 2:
            if (!all_ids.empty()) tools[who][2].handler(ania::json{{"id", all_ids[rng() % all_ids.size()]}, {"content", marker}}.dump());
            break;
        default:
            if (!all_ids.empty()) tools[who][3].handler(ania::json{{"id", all_ids[rng() % all_ids.size()]}}.dump());
        }
        all_ids.clear();
        for (std::size_t k = 0; k < scopes.size(); ++k)
            for (const auto& e : m.list(scopes[k])) {
                all_ids.push_back(e.id);
                // Whatever tool touched it, an entry holds only text written by its own scope's tools.
                INFO(e.content);
                CHECK(e.content.rfind("scope" + std::to_string(k) + " ", 0) == 0);
            }
    }
    for (std::size_t k = 0; k < scopes.size(); ++k)  // and the backend holds what the manager lists
        CHECK(r.b.load(scopes[k]).size() == m.list(scopes[k]).size());
}

TEMPLATE_LIST_TEST_CASE("bad input: invalid UTF-8, 1 MB content, hostile tags and ids", "[memory][bad-input]", memory_rule_backends) {
    using namespace ania::memory;
    using namespace ania_test;
    backend_rig<TestType> rig;
    test_manager<TestType> m(rig.b, quiet_options());
    auto r = m.save(g1, "bad \xFF\xFE bytes", "qq:\xC0", {"t\xFF"});
    REQUIRE(r.status == save_status::saved);
    CHECK(ania::text::is_valid_utf8(r.saved.content));
    CHECK(ania::text::is_valid_utf8(r.saved.user_id));
    CHECK(ania::text::is_valid_utf8(r.saved.tags.at(0)));
    r = m.save(g1, std::string(1 << 20, 'm'));
    REQUIRE(r.status == save_status::saved);
    CHECK(r.saved.content.size() == 2000);
    r = m.save(g1, "tags that look like paths", "", {"../../etc/passwd", "'; DROP TABLE ania_memory; --"});
    CHECK(m.get(g1, r.saved.id)->tags.at(1) == "'; DROP TABLE ania_memory; --");
    CHECK_FALSE(m.get(g1, "../../x"));
    CHECK(m.forget(g1, "' OR '1'='1").status == forget_status::not_found);
    CHECK(m.list(g1).size() == 3);
    test_manager<TestType> again(rig.b, quiet_options());  // read back from the backend
    CHECK(again.get(g1, r.saved.id)->tags.at(1) == "'; DROP TABLE ania_memory; --");
    CHECK(again.list(g1).size() == 3);
}

TEMPLATE_LIST_TEST_CASE("admin source: validated scopes, explicit errors", "[memory][admin]", memory_rule_backends) {
    using namespace ania::memory;
    using namespace ania_test;
    using manager = test_manager<TestType>;
    backend_rig<TestType> r;
    manager m(r.b, quiet_options());
    admin_source<manager> admin(m);
    const entry e = admin.create("g:100", "Grace is the admin", "qq:5", {"role"});
    CHECK(admin.get("g:100", e.id).content == "Grace is the admin");
    CHECK(admin.list("g:100").size() == 1);
    CHECK(admin.scopes() == std::vector<std::string>{"g:100"});
    CHECK(admin.update("g:100", e.id, std::string_view("Grace is the owner"), std::nullopt, std::nullopt).content == "Grace is the owner");
    CHECK_THROWS_WITH(admin.list("g:100' OR 1=1"), Catch::Contains("invalid memory scope"));
    CHECK_THROWS_WITH(admin.get("x:1", e.id), Catch::Contains("invalid memory scope"));
    CHECK_THROWS_WITH(admin.get("g:101", e.id), Catch::Contains("not found"));  // the id lives in g:100 only
    CHECK_THROWS_WITH(admin.create("g:100", "  "), Catch::Contains("content is empty"));
    CHECK_THROWS_WITH(admin.create("g:100", "Grace  is the\towner "), Catch::Contains("identical memory exists"));
    CHECK_THROWS_WITH(admin.remove("g:100", "00000000"), Catch::Contains("not found"));
    CHECK_THROWS_WITH(admin.update("g:100", e.id, std::string_view("  "), std::nullopt, std::nullopt), Catch::Contains("content is empty"));
    CHECK_THROWS_WITH(admin.update("g:100", "0000000\n", std::nullopt, std::nullopt, std::nullopt), Catch::Contains("0000000\\x0a"));
    {
        auto one = quiet_options();
        one.max_entries = 1;
        manager tiny(r.b, one);
        admin_source<manager> tiny_admin(tiny);
        tiny_admin.create("g:5", "the only one");
        CHECK_THROWS_WITH(tiny_admin.create("g:5", "a second one"), Catch::Contains("memory of g:5 is full"));
    }
    admin.remove("g:100", e.id);
    CHECK(admin.list("g:100").empty());
}

// ---- provenance: the versions of an entry (memory/provenance.hpp) ----------------------------------------

#include <ania/agent/tool_registry.hpp>

namespace ania_test {
/// Runs memory tool `name` as the agent does (through a tool_registry, for a model's call `call_id`).
inline std::string run_memory_tool(const ania::tool_registry& tools, std::string call_id, std::string name, std::string args) {
    ania::tool_call call;
    call.id = std::move(call_id);
    call.name = std::move(name);
    call.arguments = std::move(args);
    return tools.run(call).text;
}
} // namespace ania_test

TEMPLATE_LIST_TEST_CASE("provenance: save, two updates and a forget are four versions with their actor and tool call; a restore brings one back",
                        "[memory][provenance]", memory_rule_backends) {
    using namespace ania::memory;
    using namespace ania_test;
    backend_rig<TestType> r;
    test_manager<TestType> m(r.b, quiet_options());
    const ania::tool_registry tools(make_tools(m, g1, english_tool_replies()));
    CHECK_THAT(run_memory_tool(tools, "call_a", "memory_save", R"({"content":"小明喜欢美式咖啡","user_id":"qq:7","tags":["饮品"]})"),
               Catch::StartsWith("Saved memory"));
    const std::string id = m.list(g1).at(0).id;
    run_memory_tool(tools, "call_b", "memory_update", R"({"id":")" + id + R"(","content":"小明喜欢拿铁"})");
    run_memory_tool(tools, "call_c", "memory_update", R"({"id":")" + id + R"(","tags":["饮品","早上"]})");
    CHECK_THAT(run_memory_tool(tools, "call_d", "memory_forget", R"({"id":")" + id + R"("})"), Catch::StartsWith("Deleted memory"));
    CHECK(m.list(g1).empty());

    const std::vector<memory_version> h = m.history(g1, id);
    REQUIRE(h.size() == 4);
    const change_kind kinds[] = {change_kind::saved, change_kind::updated, change_kind::updated, change_kind::forgotten};
    const char* calls[] = {"call_a", "call_b", "call_c", "call_d"};
    for (std::size_t i = 0; i < 4; ++i) {
        CHECK(h[i].seq == i + 1);
        CHECK(h[i].kind == kinds[i]);
        CHECK(h[i].origin.actor == "model");
        CHECK(h[i].origin.session == "g:1");
        CHECK(h[i].origin.tool_call_id == calls[i]);
        CHECK(h[i].at.size() == 30);
        CHECK(h[i].user_id == "qq:7");
    }
    CHECK(h[0].content == "小明喜欢美式咖啡");
    CHECK(h[1].content == "小明喜欢拿铁");
    CHECK(h[1].tags == std::vector<std::string>{"饮品"});
    CHECK(h[2].tags == std::vector<std::string>{"饮品", "早上"});
    CHECK(h[3].content == "小明喜欢拿铁");  // what was forgotten
    CHECK(m.history(g2, id).empty());       // versions are per scope, like the entries

    // The operator restores the second version: the entry is back under its id, recorded as the admin's.
    admin_source admin(m);
    const entry back = admin.restore("g:1", id, 2);
    CHECK(back.id == id);
    CHECK(back.content == "小明喜欢拿铁");
    CHECK(back.tags == std::vector<std::string>{"饮品"});
    CHECK(m.get(g1, id).value().content == "小明喜欢拿铁");
    CHECK(r.b.load(g1).size() == 1);  // in the backend, not only in the index
    const auto after = admin.history("g:1", id);
    REQUIRE(after.size() == 5);
    CHECK(after[4].kind == change_kind::restored);
    CHECK(after[4].origin.actor == "admin");
    CHECK(after[4].origin.tool_call_id.empty());
    // Restoring over an existing entry updates it; an unknown version is not found; a bad scope never reaches it.
    CHECK(admin.restore("g:1", id, 3).tags == std::vector<std::string>{"饮品", "早上"});
    CHECK_THROWS_WITH(admin.restore("g:1", id, 99), Catch::Contains("version 99"));
    CHECK_THROWS_WITH(admin.restore("g:1 OR 1=1", id, 1), Catch::Contains("invalid memory scope"));
    CHECK(m.history(g1, id).size() == 6);
    // A caller that says who it is keeps its name (acting_as).
    {
        const acting_as who({"ops-script", "", ""});
        admin.update("g:1", id, std::string_view("小明喜欢茶"), std::nullopt, std::nullopt);
    }
    CHECK(m.history(g1, id).back().origin.actor == "ops-script");
}

TEMPLATE_LIST_TEST_CASE("provenance: the cap keeps the newest versions; 0 records none", "[memory][provenance]", memory_rule_backends) {
    using namespace ania::memory;
    using namespace ania_test;
    backend_rig<TestType> r;
    auto opt = quiet_options();
    opt.versions_kept = 3;
    test_manager<TestType> m(r.b, opt);
    const std::string id = m.save(g1, "version 0").saved.id;
    for (int i = 1; i <= 5; ++i) REQUIRE(m.update(g1, id, std::string_view("version " + std::to_string(i)), std::nullopt, std::nullopt).status == update_status::updated);
    const auto h = m.history(g1, id);
    REQUIRE(h.size() == 3);
    CHECK(h[0].seq == 4);
    CHECK(h[0].content == "version 3");
    CHECK(h[2].content == "version 5");
    CHECK(h[0].origin.actor.empty());  // nobody said who: recorded as such, not guessed
    CHECK(m.restore(g1, id, 1).status == update_status::not_found);  // dropped by the cap

    auto none = quiet_options();
    none.versions_kept = 0;
    test_manager<TestType> quiet(r.b, none);
    const std::string other = quiet.save(g2, "not recorded").saved.id;
    quiet.update(g2, other, std::string_view("still not"), std::nullopt, std::nullopt);
    CHECK(quiet.history(g2, other).empty());
    // Recording again later: the entry's state before its first recorded change is kept as a baseline.
    test_manager<TestType> again(r.b, quiet_options());
    again.update(g2, other, std::string_view("now recorded"), std::nullopt, std::nullopt);
    const auto b = again.history(g2, other);
    REQUIRE(b.size() == 2);
    CHECK(b[0].kind == change_kind::baseline);
    CHECK(b[0].content == "still not");
    CHECK(b[1].kind == change_kind::updated);
    CHECK(b[1].content == "now recorded");
}
