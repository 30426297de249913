// tests/unit/dos.cpp -- input size never buys quadratic time. Each case feeds what a hostile model or row can
// send, sized so that a quadratic implementation cannot finish within this executable's Meson timeout
// (20 s, x3 in CI) while a linear one takes well under a second: the figures are in bench/, these only fail
// when the complexity class is wrong.
#include <catch2/catch.hpp>

#include <string>
#include <vector>

#include <ania/agent/agent.hpp>
#include <ania/json.hpp>
#include <ania/memory/manager.hpp>
#include <ania/memory/tools.hpp>
#include <ania/transcript.hpp>

using ania::message;

namespace {
/// A memory manager over RAM that logs nothing.
struct quiet_memory {
    ania::memory::ram_backend backend;
    ania::memory::manager manager{backend, [] {
                                               ania::memory::manager_options o;
                                               o.log = [](ania::log_level, std::string_view) {};
                                               return o;
                                           }()};
};
/// Replies with calls once, then with text; the calls are built outside the timed part of the test.
struct two_step_client {
    std::shared_ptr<std::vector<ania::completion>> script;
    ania::completion complete(const ania::chat_request&) {
        ania::completion c = std::move(script->back());
        script->pop_back();
        return c;
    }
};
struct quiet_log {
    void operator()(ania::log_level, std::string_view) const {}
};
struct dos_traits : ania::default_agent_traits {
    using client = two_step_client;
    using log = quiet_log;
};
} // namespace

TEST_CASE("80,000 tool calls in one reply, half without ids, and a 10 MB argument: one agent turn, linear", "[dos][agent]") {
    std::vector<ania::tool_call> cs;
    for (int i = 0; i < 80000; ++i)
        cs.push_back({i % 2 ? "" : "dup", "function", i % 3 ? "echo" : "missing", i == 7 ? std::string(10 << 20, 'x') : "{}", {}, {}});
    auto script = std::make_shared<std::vector<ania::completion>>();
    script->push_back(ania::completion::success(message::assistant("done")));
    script->push_back(ania::completion::success(message::assistant_calls(std::move(cs))));
    ania::ram_store store;
    ania::background_writer<ania::ram_store> writer(store);
    ania::basic_agent<dos_traits> agent(writer, {.client = {script}, .tools = ania::tool_registry(std::vector<ania::tool>{
                                                     {"echo", "", ania::json::object(), [](std::string_view a) { return std::string(a); }}})},
                                        "g:1");
    const ania::chat_result r = agent.chat("go");
    REQUIRE(r.ok());
    CHECK(r.ids_assigned == 79999);  // every call but the first "dup"
    writer.flush();
    const auto stored = store.load("g:1");
    REQUIRE(stored.size() == 80003);
    CHECK(ania::is_valid_transcript(stored));
    CHECK(stored[2 + 7].content.find("不是合法的 JSON") != std::string::npos);  // 10 MB of x is not JSON: answered, not echoed
    CHECK(stored[2 + 200].content == ania::tool_texts{}.too_many_calls);
}

TEST_CASE("400,000 tool calls in one message: validated and repaired in n log n", "[dos][transcript]") {
    std::vector<ania::tool_call> cs;
    cs.reserve(400000);
    for (int i = 0; i < 400000; ++i) cs.push_back({"call_" + std::to_string(i), "function", "f", "{}", {}, {}});
    std::vector<message> t = {message::user("u"), message::assistant_calls(std::move(cs))};
    for (int i = 399999; i >= 0; --i) t.push_back(message::tool_result("call_" + std::to_string(i), "r"));  // the worst order
    CHECK(ania::is_valid_transcript(t));
    t.push_back(message::tool_result("call_7", "a duplicate"));  // makes the repair run over everything
    const auto r = ania::repair_transcript(t);
    CHECK(r.results_dropped == 1);
    CHECK(ania::is_valid_transcript(t));
    CHECK(t.size() == 400002);
}

TEST_CASE("memory_search with a 4 MB query of distinct words stays cheap", "[dos][memory]") {
    using namespace ania::memory;
    quiet_memory q;
    auto& m = q.manager;
    const scope g = scope::from("g:1");
    for (int i = 0; i < 50; ++i) m.save(g, "entry w" + std::to_string(i * 7919) + " about something");
    std::string query;
    for (int i = 0; query.size() < (4u << 20); ++i) query += "w" + std::to_string(i) + " ";
    const auto hits = m.search(g, query);  // cut to max_query_runes, terms deduplicated by hashing
    CHECK(hits.size() <= 50);
    CHECK_FALSE(hits.empty());
}

TEST_CASE("memory_save with a 10 MB user id, a 10 MB tag and 100,000 more tags stores and replies within the caps", "[dos][memory]") {
    using namespace ania::memory;
    quiet_memory q;
    auto& m = q.manager;
    const auto& opt = m.options();
    const scope g = scope::from("g:1");
    const auto tools = make_tools(m, g);
    ania::json args = {{"content", "a fact"}, {"user_id", std::string(10u << 20, 'u')}};
    ania::json tags = ania::json::array({std::string(10u << 20, 't')});
    for (int i = 0; i < 100000; ++i) tags.push_back("tag" + std::to_string(i));
    args["tags"] = std::move(tags);
    const std::string reply = tools[0].handler(args.dump());
    CHECK(reply.rfind("已保存记忆", 0) == 0);
    const auto stored = m.list(g).at(0);
    CHECK(ania::text::rune_count(stored.user_id) == opt.max_user_id_runes);
    CHECK(stored.tags.size() == opt.max_tags);
    for (const auto& t : stored.tags) CHECK(ania::text::rune_count(t) <= opt.max_tag_runes);
    CHECK(tools[1].handler("{}").size() < 4096);  // memory_search's reply carries the capped fields only
    CHECK(tools[3].handler(ania::json{{"id", std::string(10u << 20, 'x')}}.dump()).size() < 512);  // the echoed id is cut
}
