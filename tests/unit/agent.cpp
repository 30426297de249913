// tests/unit/agent.cpp -- basic_agent: the whole turn over a SCRIPTED client (no LLM here), the window and
// the store after it, tools, hooks, events, images, cancellation, failures; the slot forms at compile time.
#include <catch2/catch.hpp>

#include <atomic>
#include <memory>
#include <stop_token>
#include <string>
#include <thread>
#include <vector>

#include <ania/ania.hpp>
#include <ania/json.hpp>  // the tools' JSON schemas (compiled mode: not in the umbrella)

#include "agent_rig.hpp"
#include "scripted_client.hpp"

using ania::message;
using ania::role;
using ania_test::scripted_client;
using ania_test::capture_log;
using ania_test::recorded_events;
using ania_test::rig;
using ania_test::test_agent;
using ania_test::test_traits;

namespace {

ania::tool echo_tool(std::shared_ptr<std::vector<std::string>> seen = nullptr) {
    return {"echo", "echoes its argument", ania::json{{"type", "object"}}, [seen](std::string_view args) {
                if (seen) seen->emplace_back(args);
                return "echo:" + std::string(args);
            }};
}

std::string image_data_uri(char c) { return std::string("data:image/png;base64,") + std::string(40, c); }

} // namespace

TEST_CASE("a plain turn: base prompt, user message, reply; both copies committed", "[agent]") {
    rig r;
    r.model.reply("你好！");
    auto a = r.make({.system_prompt = "你是 Ania。"});
    const ania::chat_result res = a.chat("[nickname:小明] 你好");
    REQUIRE(res.ok());
    CHECK(res.reply == "你好！");
    CHECK(res.stats.iterations == 1);
    REQUIRE(r.model.calls() == 1);
    const auto& sent = r.model.requests()[0];
    REQUIRE(sent.size() == 2);
    CHECK(sent[0].role == role::system);
    CHECK(sent[0].content == "你是 Ania。");
    CHECK(sent[1].content == "[nickname:小明] 你好");
    const std::vector<message> want{message::user("[nickname:小明] 你好"), message::assistant("你好！")};
    CHECK(std::vector<message>(a.window().messages().begin(), a.window().messages().end()) == want);
    CHECK(r.stored() == want);
    CHECK(res.messages == want);
}

TEST_CASE("injections, auto-inject and UserPromptSubmit context are sent, never kept", "[agent][persist]") {
    rig r;
    r.model.reply("ok").reply("ok again");
    r.hooks.on_user_prompt_submit([](const ania::user_prompt_event& e) { return ania::prompt_decision::allow("[hook] saw " + std::string(e.text)); });
    ania::agent_options opt;
    opt.auto_inject = [](std::string_view, std::string_view text) { return "[memory] about " + std::string(text); };
    auto a = r.make(opt);
    const auto res = a.chat("hello", {.injections = {"[knowledge] snippet"}});
    REQUIRE(res.ok());
    const message& sent = r.model.requests()[0].back();
    CHECK(sent.content == "[knowledge] snippet\n\n[memory] about hello\n\n[hook] saw hello\n\nhello");
    CHECK(a.window()[0].content == "hello");
    CHECK(r.stored()[0].content == "hello");
    // The next turn replays the history as kept: no old injection in it.
    REQUIRE(a.chat("again").ok());
    const auto& second = r.model.requests()[1];
    REQUIRE(second.size() == 3);
    CHECK(second[0].content == "hello");
    CHECK(second[2].content == "[memory] about again\n\n[hook] saw again\n\nagain");
}

TEST_CASE("a tool turn: the stored suffix is user, calls, results in call order, reply", "[agent][tools]") {
    rig r;
    auto seen = std::make_shared<std::vector<std::string>>();
    r.tools.push_back(echo_tool(seen));
    r.model.calls({{"echo", R"({"n":1})"}, {"echo", R"({"n":2})"}, {"echo", R"({"n":3})"}}).reply("done");
    auto a = r.make();
    const auto res = a.chat("run three");
    REQUIRE(res.ok());
    CHECK(res.stats.iterations == 2);
    CHECK(*seen == std::vector<std::string>{R"({"n":1})", R"({"n":2})", R"({"n":3})"});
    const auto stored = r.stored();
    REQUIRE(stored.size() == 6);
    CHECK(stored[0].content == "run three");
    CHECK(stored[1].tool_calls.size() == 3);
    for (int k = 0; k < 3; ++k) {
        CHECK(stored[2 + k].tool_call_id == stored[1].tool_calls[k].id);
        CHECK(stored[2 + k].content == "echo:" + stored[1].tool_calls[k].arguments);
    }
    CHECK(stored[5].content == "done");
    CHECK(ania::is_valid_transcript(stored));
    // The second request carried the calls and their results; both offered the tool.
    CHECK(r.model.requests()[1].size() == 5);
    CHECK(r.model.tools_offered() == std::vector<std::size_t>{1, 1});
}

TEST_CASE("usage with tool rounds: the window keeps the last call's prompt tokens, not the sum", "[agent][usage]") {
    rig r;
    r.tools.push_back(echo_tool());
    r.model.calls({{"echo", "{}"}}, {1000, 10, 1010, {}}).reply("done", {1300, 20, 1320, {}});
    auto a = r.make();
    const auto res = a.chat("x");
    CHECK(res.stats.total.prompt_tokens == 2300);
    CHECK(res.stats.last_prompt_tokens == 1300);
    CHECK(a.window().last_prompt_tokens() == 1300);
}

TEST_CASE("the tool loop answers a throwing tool, malformed arguments, an unknown tool; calls without ids get one", "[agent][tools][bad-input]") {
    rig r;
    r.tools.push_back({"boom", "throws", ania::json::object(), [](std::string_view) -> std::string { throw std::runtime_error("kaput"); }});
    r.tools.push_back(echo_tool());
    std::vector<ania::tool_call> calls{{"", "function", "boom", "{}", {}, {}},
                                       {"dup", "function", "echo", "{not json", {}, {}},
                                       {"dup", "function", "nope", "{}", {}, {}},
                                       {"c4", "function", "echo", "", {}, {}}};
    r.model.message(message::assistant_calls(calls)).reply("sorry");
    auto a = r.make();
    const auto res = a.chat("go");
    REQUIRE(res.ok());
    CHECK(res.ids_assigned == 2);  // the empty id, and the second "dup"
    const auto stored = r.stored();
    REQUIRE(stored.size() == 7);
    CHECK(ania::is_valid_transcript(stored));
    CHECK(stored[2].content.find("执行失败") != std::string::npos);
    CHECK(stored[2].content.find("kaput") != std::string::npos);
    CHECK(stored[3].content.find("不是合法的 JSON") != std::string::npos);
    CHECK(stored[4].content.find("未知工具 nope") != std::string::npos);
    CHECK(stored[5].content == "echo:{}");  // empty arguments count as {}
}

TEST_CASE("a blocked prompt sends and stores nothing; a blocked tool answers with the reason", "[agent][hooks]") {
    rig r;
    r.tools.push_back(echo_tool());
    r.hooks.on_user_prompt_submit([](const ania::user_prompt_event& e) {
        return e.text == "forbidden" ? ania::prompt_decision::deny("not allowed here") : ania::prompt_decision::allow();
    });
    r.hooks.on_pre_tool_use([](const ania::tool_use_event& e) {
        return e.call.arguments == R"({"x":"secret"})" ? ania::tool_decision::deny("tool blocked by policy") : ania::tool_decision::allow();
    });
    std::vector<std::string> post;
    r.hooks.on_post_tool_use([&](const ania::tool_result_event& e) { post.emplace_back(e.result); });
    std::vector<ania::turn_end> stops;
    r.hooks.on_stop([&](const ania::stop_event& e) { stops.push_back(e.end); });
    r.model.calls({{"echo", R"({"x":"secret"})"}, {"echo", R"({"x":"open"})"}}).reply("ok");
    auto a = r.make();
    const auto blocked = a.chat("forbidden");
    CHECK(blocked.end == ania::turn_end::blocked);
    CHECK(blocked.error == "not allowed here");
    CHECK(r.model.calls() == 0);
    CHECK(r.stored().empty());
    CHECK(a.window().empty());
    const auto res = a.chat("fine");
    REQUIRE(res.ok());
    const auto stored = r.stored();
    CHECK(stored[2].content == "tool blocked by policy");
    CHECK(stored[3].content == R"(echo:{"x":"open"})");
    CHECK(post == std::vector<std::string>{"tool blocked by policy", R"(echo:{"x":"open"})"});
    CHECK(stops == std::vector<ania::turn_end>{ania::turn_end::blocked, ania::turn_end::replied});
}

TEST_CASE("PostToolUse sees the result cut to 1000 runes; the model gets all of it", "[agent][hooks]") {
    rig r;
    r.tools.push_back({"long", "", ania::json::object(), [](std::string_view) {
                     std::string s;
                     for (int i = 0; i < 1500; ++i) s += "字";
                     return s;
                 }});
    std::size_t seen = 0;
    r.hooks.on_post_tool_use([&](const ania::tool_result_event& e) { seen = ania::text::rune_count(e.result); });
    r.model.calls({{"long", "{}"}}).reply("ok");
    auto a = r.make();
    REQUIRE(a.chat("x").ok());
    CHECK(seen == 1000);
    CHECK(ania::text::rune_count(r.stored()[2].content) == 1500);
}

TEST_CASE("hooks that throw are logged and never end the turn", "[agent][hooks]") {
    rig r;
    r.tools.push_back(echo_tool());
    r.hooks.on_session_start([](const ania::session_start_event&) -> std::string { throw std::runtime_error("ss"); });
    r.hooks.on_user_prompt_submit([](const ania::user_prompt_event&) -> ania::prompt_decision { throw std::runtime_error("ups"); });
    r.hooks.on_pre_tool_use([](const ania::tool_use_event&) -> ania::tool_decision { throw std::runtime_error("ptu"); });
    r.hooks.on_post_tool_use([](const ania::tool_result_event&) { throw 42; });
    r.hooks.on_stop([](const ania::stop_event&) { throw std::runtime_error("stop"); });
    r.model.calls({{"echo", "{}"}}).reply("fine");
    auto a = r.make();
    const auto res = a.chat("x");
    CHECK(res.ok());
    CHECK(r.stored().size() == 4);
    CHECK(r.log.lines->size() >= 5);
}

TEST_CASE("SessionStart context joins the base prompt of every request of the session, never stored", "[agent][hooks]") {
    rig r;
    int fired = 0;
    r.hooks.on_session_start([&](const ania::session_start_event&) {
        ++fired;
        return std::string("今天是星期二。");
    });
    r.model.reply("a").reply("b");
    auto a = r.make({.system_prompt = "你是 Ania。"});
    REQUIRE(a.chat("1").ok());
    REQUIRE(a.chat("2").ok());
    CHECK(fired == 1);
    CHECK(r.model.requests()[1][0].content == "你是 Ania。\n\n今天是星期二。");
    for (const message& m : r.stored()) CHECK(m.content.find("星期二") == std::string::npos);
}

TEST_CASE("a bot's sessions share one agent_options: each has its own key, history and SessionStart context", "[agent]") {
    rig r;
    r.hooks.on_session_start([](const ania::session_start_event& e) { return "会话 " + std::string(e.session); });
    r.model.reply("a").reply("b").reply("c");
    const auto shared = std::make_shared<const ania::agent_options>(ania::agent_options{.system_prompt = "你是 Ania。"});
    const test_agent::parts parts{.client = r.model, .hooks = r.hooks, .events = r.events, .log = r.log};
    test_agent one(r.writer, parts, shared, "g:1");
    test_agent two(r.writer, parts, shared, "f:2");
    CHECK(one.session() == "g:1");
    CHECK(two.session() == "f:2");
    CHECK(&one.options() == shared.get());  // read, not copied
    CHECK(&two.options() == shared.get());
    CHECK(shared.use_count() == 3);
    REQUIRE(one.chat("1").ok());
    REQUIRE(two.chat("2").ok());
    REQUIRE(one.chat("3").ok());
    const auto& sent = r.model.requests();
    REQUIRE(sent.size() == 3);
    CHECK(sent[0][0].content == "你是 Ania。\n\n会话 g:1");
    CHECK(sent[1][0].content == "你是 Ania。\n\n会话 f:2");
    CHECK(sent[2][0].content == "你是 Ania。\n\n会话 g:1");
    CHECK(sent[2].size() == 4);  // g:1's own history: 1, a, then 3
    CHECK(r.stored("g:1") == std::vector<message>{message::user("1"), message::assistant("a"), message::user("3"), message::assistant("c")});
    CHECK(r.stored("f:2") == std::vector<message>{message::user("2"), message::assistant("b")});

    // Options of its own (the other constructor).
    test_agent own(r.writer, parts, "g:3");
    CHECK(own.session() == "g:3");
    CHECK(own.shared_options().use_count() == 1);
    // No base prompt, no context: no system message at all.
    r.model.reply("d");
    test_agent bare(r.writer, {.client = r.model, .log = r.log}, std::make_shared<const ania::agent_options>(), "g:4");
    REQUIRE(bare.chat("4").ok());
    CHECK(r.model.requests().back().size() == 1);
    CHECK(r.model.requests().back()[0].role == role::user);

    CHECK_THROWS_AS(test_agent(r.writer, parts, std::shared_ptr<const ania::agent_options>(), "g:5"), ania::error);
    const auto bad = std::make_shared<const ania::agent_options>(ania::agent_options{.max_iterations = 0});
    CHECK_THROWS_AS(test_agent(r.writer, parts, bad, "g:5"), ania::error);
}

TEST_CASE("a client failure on the first call commits nothing; after tools ran, the partial turn is kept", "[agent][failure]") {
    rig r;
    r.tools.push_back(echo_tool());
    r.model.fail("HTTP 503").calls({{"echo", "{}"}}).fail("HTTP 502").throws("socket closed");
    auto a = r.make();
    const auto first = a.chat("one");
    CHECK(first.end == ania::turn_end::failed);
    CHECK(first.error == "HTTP 503");
    CHECK_FALSE(first.committed());
    CHECK(a.window().empty());
    CHECK(r.stored().empty());
    const auto second = a.chat("two");
    CHECK(second.end == ania::turn_end::failed);
    CHECK(second.error == "HTTP 502");
    const auto stored = r.stored();
    REQUIRE(stored.size() == 3);  // user, the call, its result: the tool ran, the history says so
    CHECK(ania::is_valid_transcript(stored));
    const auto third = a.chat("three");
    CHECK(third.end == ania::turn_end::failed);
    CHECK(third.error.find("socket closed") != std::string::npos);
    CHECK(r.stored().size() == 3);
}

TEST_CASE("max_iterations ends a tool loop that never answers", "[agent][tools]") {
    rig r;
    r.tools.push_back(echo_tool());
    for (int i = 0; i < 10; ++i) r.model.calls({{"echo", "{}"}});
    auto a = r.make({.max_iterations = 3});
    const auto res = a.chat("loop");
    CHECK(res.end == ania::turn_end::max_iterations);
    CHECK(res.stats.iterations == 3);
    CHECK(r.model.calls() == 3);
    const auto stored = r.stored();
    CHECK(stored.size() == 7);
    CHECK(ania::is_valid_transcript(stored));
    CHECK(a.chat("again", {.max_iterations = 1}).stats.iterations == 1);
}

TEST_CASE("too many calls in one reply: the excess is answered, not run", "[agent][tools][bad-input]") {
    rig r;
    auto seen = std::make_shared<std::vector<std::string>>();
    r.tools.push_back(echo_tool(seen));
    std::vector<std::pair<std::string, std::string>> many;
    for (int i = 0; i < 300; ++i) many.emplace_back("echo", "{}");
    r.model.calls(many).reply("ok");
    ania::agent_options opt;
    opt.max_tool_calls_per_reply = 10;
    auto a = r.make(opt);
    REQUIRE(a.chat("x").ok());
    CHECK(seen->size() == 10);
    const auto stored = r.stored();
    CHECK(stored.size() == 1 + 1 + 300 + 1);
    CHECK(stored[12].content == ania::tool_texts{}.too_many_calls);
    CHECK(ania::is_valid_transcript(stored));
}

TEST_CASE("cancellation mid-loop leaves a valid window and store; the rest of the batch is [cancelled]", "[agent][cancel]") {
    rig r;
    std::stop_source stop;
    int ran = 0;
    r.tools.push_back({"slow", "", ania::json::object(), [&](std::string_view) {
                     if (++ran == 2) stop.request_stop();  // a /stop arrives while the second tool runs
                     return std::string("ran");
                 }});
    r.model.calls({{"slow", "{}"}, {"slow", "{}"}, {"slow", "{}"}, {"slow", "{}"}}).reply("never sent");
    auto a = r.make();
    const auto res = a.chat("go", {}, stop.get_token());
    CHECK(res.end == ania::turn_end::cancelled);
    CHECK(ran == 2);
    CHECK(r.model.calls() == 1);
    const auto stored = r.stored();
    REQUIRE(stored.size() == 6);
    CHECK(stored[2].content == "ran");
    CHECK(stored[3].content == "ran");
    CHECK(stored[4].content == "[cancelled]");
    CHECK(stored[5].content == "[cancelled]");
    CHECK(ania::is_valid_transcript(stored));
    CHECK(ania::is_valid_transcript(a.window().messages()));
    CHECK(stored == std::vector<message>(a.window().messages().begin(), a.window().messages().end()));
    // Cancelled before the first call: nothing is sent or kept.
    std::stop_source early;
    early.request_stop();
    const auto none = a.chat("later", {}, early.get_token());
    CHECK(none.end == ania::turn_end::cancelled);
    CHECK_FALSE(none.committed());
    CHECK(r.stored().size() == 6);
}

TEST_CASE("the client gets the stop token of the turn", "[agent][cancel]") {
    rig r;
    r.model.respond([](const ania::chat_request& req) {
        return req.stop.stop_possible() ? ania::completion::success(message::assistant("has token"))
                                        : ania::completion::failure("no token");
    });
    auto a = r.make();
    std::stop_source s;
    CHECK(a.chat("x", {}, s.get_token()).reply == "has token");
}

TEST_CASE("compression triggered by reported usage, with PreCompact and an event", "[agent][compress]") {
    rig r;
    int pre = 0;
    r.hooks.on_pre_compact([&](const ania::pre_compact_event&) { ++pre; });
    r.model.reply("one", {900, 10, 910, {}});  // 900 > 0.8 x 1000
    r.model.reply("摘要内容");                   // the compression request
    r.model.reply("two");
    auto a = r.make({.window = {.max_context_tokens = 1000}});
    REQUIRE(a.chat("first").ok());
    CHECK(a.window().last_prompt_tokens() == 900);
    const auto res = a.chat("second");
    REQUIRE(res.ok());
    CHECK(pre == 1);
    CHECK(res.compression.status == ania::compress_status::compressed);
    CHECK(res.stats.compress_usage.total_tokens == 120);  // the summary call, apart from the turn's
    CHECK(res.stats.iterations == 1);
    REQUIRE(r.events.compressions->size() == 1);
    const auto& e = r.events.compressions->front();
    CHECK(e.why == ania::compression_event::trigger::usage);
    CHECK(e.tokens_before == 900);
    CHECK(e.dropped == 2);
    CHECK(e.prefix == 1);
    CHECK_FALSE(e.fell_back);
    const auto stored = r.stored();
    REQUIRE(stored.size() == 3);  // the summary, then the second turn
    CHECK(stored[0].content.find("摘要内容") != std::string::npos);
    CHECK(stored[0].role == role::user);
    CHECK(stored[1].content == "second");
}

namespace {

/// SCRIPTED (no LLM): answers every turn with `reply` and reports as its prompt tokens the character-class count
/// of what it was sent, base prompt and tool schemas included, as a provider would; a request without the
/// agent's base prompt is a summary request, answered "摘要".
struct measuring_model {
    struct state {
        std::string system, reply = "ok";
        int turns = 0, summaries = 0;
    };
    std::shared_ptr<state> st = std::make_shared<state>();

    ania::completion complete(const ania::chat_request& req) {
        const std::vector<message> msgs = req.messages.to_vector();
        if (msgs.empty() || msgs[0].content != st->system) {
            ++st->summaries;
            return ania::completion::success(message::assistant("摘要"), {20, 5, 25, {}});
        }
        ++st->turns;
        const ania::char_class_counter count;
        std::int64_t t = 0;
        for (const message& m : msgs) t += count.count(m);
        if (!req.tools.empty()) t += count.count(message::system(ania::definitions_text(req.tools)));
        return ania::completion::success(message::assistant(st->reply), {t, 2, t + 2, {}});
    }
};

struct measured_traits : test_traits {
    using client = measuring_model;
};

} // namespace

TEST_CASE("a base prompt over the threshold: said once, and no compression while the history stays small", "[agent][compress][fixed]") {
    rig r;
    measuring_model model;
    std::string prompt;
    const ania::char_class_counter count;
    while (count.count(message::system(prompt)) < 1650) prompt += "你是 Ania，一个很有耐心的助手。";
    model.st->system = prompt;
    const ania::agent_options opt{.system_prompt = prompt, .window = {.max_context_tokens = 2000}};  // threshold 1600
    ania::basic_agent<measured_traits> a(r.writer, {.client = model, .tools = ania::tool_registry(std::vector<ania::tool>{echo_tool()}),
                                                    .events = r.events, .log = r.log}, "g:1", opt);
    for (int i = 0; i < 6; ++i) {
        const auto res = a.chat("嗯");
        REQUIRE(res.ok());
        CHECK(res.compressions == 0);
    }
    CHECK(model.st->turns == 6);
    CHECK(model.st->summaries == 0);  // every turn paid a summary before
    CHECK(r.events.compressions->empty());
    REQUIRE(r.events.fixed->size() == 1);
    const ania::fixed_context_event& e = r.events.fixed->front();
    CHECK(e.threshold == 1600);
    CHECK(e.fixed_tokens > 1600);
    CHECK(e.max_context_tokens == 2000);
    CHECK(e.history_budget == a.window().history_budget());
    CHECK(e.history_budget > 0);
    std::size_t said = 0;
    for (const std::string& l : *r.log.lines) said += l.find("compressing cannot help") != std::string::npos;
    CHECK(said == 1);
    // The history grows past its budget: one compression, then none while it is small again.
    model.st->reply = std::string(120, 'x');
    int turns = 0;
    while (model.st->summaries == 0 && turns < 20) {
        REQUIRE(a.chat("再说一遍").ok());
        ++turns;
    }
    CHECK(model.st->summaries == 1);
    CHECK(r.events.compressions->size() == 1);
    model.st->reply = "ok";
    REQUIRE(a.chat("嗯").ok());
    CHECK(model.st->summaries == 1);
    CHECK(r.events.fixed->size() == 1);  // still said once
}

TEST_CASE("a restart with an over-budget history compresses on the estimate before the first send", "[agent][compress]") {
    rig r;
    std::vector<message> old;
    for (int i = 0; i < 40; ++i) {
        old.push_back(message::user("用户说了很长的一段话，内容是第 " + std::to_string(i) + " 条。"));
        old.push_back(message::assistant("助手回答了同样很长的一段话，编号 " + std::to_string(i) + "。"));
    }
    r.store.append("g:1", old);
    r.model.reply("旧对话的摘要").reply("hi");
    auto a = r.make({.window = {.max_context_tokens = 300}});
    const auto res = a.chat("新消息");
    REQUIRE(res.ok());
    CHECK(res.compression.status == ania::compress_status::compressed);
    REQUIRE(r.model.calls() == 2);
    // The first call is the summary; the first chat request already holds the compressed history.
    CHECK(r.model.requests()[0].back().content.find("用户说了很长") != std::string::npos);
    const auto& sent = r.model.requests()[1];
    CHECK(sent.size() == 2);
    CHECK(sent[0].content.find("旧对话的摘要") != std::string::npos);
    REQUIRE(r.events.compressions->size() == 1);
    CHECK(r.events.compressions->front().why == ania::compression_event::trigger::estimate);
    CHECK(r.stored().size() == 3);
}

TEST_CASE("a compression failure mid-conversation falls back to truncation through the writer", "[agent][compress][failure]") {
    rig r;
    for (int i = 0; i < 3; ++i) r.model.reply("reply " + std::to_string(i), {100, 10, 110, {}});
    r.model.reply("big", {950, 10, 960, {}});
    r.model.fail("compression model down");
    r.model.reply("after");
    auto a = r.make({.window = {.max_context_tokens = 1000}});
    for (int i = 0; i < 4; ++i) REQUIRE(a.chat("turn " + std::to_string(i)).ok());
    CHECK(a.window().size() == 8);
    const auto res = a.chat("next");
    REQUIRE(res.ok());
    CHECK(res.compression.status == ania::compress_status::compressed);
    CHECK(res.compression.error.find("compression model down") != std::string::npos);
    REQUIRE(r.events.compressions->size() == 1);
    CHECK(r.events.compressions->front().fell_back);
    CHECK(r.events.compressions->front().dropped == 4);  // the oldest half
    const auto stored = r.stored();
    REQUIRE(stored.size() == 6);
    CHECK(stored[0].content == "turn 2");
    CHECK(stored[5].content == "after");
    CHECK(stored == std::vector<message>(a.window().messages().begin(), a.window().messages().end()));
}

TEST_CASE("restart: a new agent on the same store continues from what the writer has queued", "[agent][persist]") {
    rig r;
    r.model.reply("a").reply("b");
    {
        auto a = r.make();
        REQUIRE(a.chat("1").ok());
    }
    auto b = r.make();  // no flush in between: the load goes through the writer
    REQUIRE(b.chat("2").ok());
    CHECK(r.model.requests()[1].size() == 3);
    CHECK(r.stored().size() == 4);
}

TEST_CASE("a stored history with a cut turn is repaired at load, with an event", "[agent][persist]") {
    rig r;
    r.store.append("g:1", std::vector<message>{message::user("q"), message::assistant_calls({{"c1", "function", "f", "{}", {}, {}}})});
    r.model.reply("ok");
    auto a = r.make();
    REQUIRE(a.chat("next").ok());
    REQUIRE(r.events.repairs->size() == 1);
    CHECK(r.events.repairs->front().where == ania::repair_event::site::load);
    CHECK(r.events.repairs->front().report.results_added == 1);
    CHECK(ania::is_valid_transcript(r.model.requests()[0]));
}

TEST_CASE("a store that fails to load: the conversation goes on in memory, with an event", "[agent][persist][failure]") {
    struct failing_store {
        std::vector<message> load(std::string_view) { throw ania::error(ania::errc::store_error, "disk on fire"); }
        void append(std::string_view, std::span<const message>) {}
        void replace(std::string_view, std::span<const message>) {}
        void clear(std::string_view) {}
    };
    struct traits : test_traits {
        using store = failing_store;
    };
    failing_store s;
    ania::background_writer<failing_store> w(s);
    scripted_client model;
    model.reply("still here");
    recorded_events ev;
    ania::basic_agent<traits> a(w, {.client = model, .events = ev}, "g:1");
    CHECK(a.chat("x").ok());
    REQUIRE(ev.persistence->size() == 1);
    CHECK(ev.persistence->front().find("disk on fire") != std::string::npos);
}

TEST_CASE("multimodal: user images in the window, markers in the store, also after a compression's replace", "[agent][images]") {
    rig r;
    const std::string img = image_data_uri('A');
    r.model.reply("a cat", {900, 10, 910, {}}).reply("summary").reply("ok");
    auto a = r.make({.window = {.max_context_tokens = 1000, .compress_ratio = 0.8}});
    REQUIRE(a.chat(ania::user_input("看这张图", {img})).ok());
    const message& sent = r.model.requests()[0].back();
    REQUIRE(sent.form == ania::content_form::parts);
    CHECK(sent.parts[1].url == img);
    CHECK(ania::has_images(a.window()[0]));
    const auto stored = r.stored();
    CHECK_FALSE(ania::has_images(stored[0]));
    CHECK(stored[0].text().find(ania::image_marker_for(img)) != std::string::npos);
    // A summary that keeps the newest turn verbatim: the window keeps that turn's image, the replace writes
    // the new history with a marker.
    ania::ram_store s2;
    ania::background_writer<ania::ram_store> w2(s2);
    scripted_client m2;
    m2.reply("1", {10, 1, 11, {}}).reply("2", {950, 1, 951, {}}).reply("summary of the older turn").reply("3");
    ania::summary_options keep_one;
    keep_one.keep_last_turns = 1;
    ania::basic_agent<test_traits> b(w2, {.client = m2, .compressor = ania::default_compressor<scripted_client>(m2, keep_one)},
                                     "g:2", {.window = {.max_context_tokens = 1000}});
    REQUIRE(b.chat("older").ok());
    REQUIRE(b.chat(ania::user_input("图", {img})).ok());
    REQUIRE(b.chat("third").ok());  // compresses first: [summary, the image turn]
    REQUIRE(b.window().size() == 5);
    CHECK(b.window()[0].content.find("summary of the older turn") != std::string::npos);
    CHECK(ania::has_images(b.window()[1]));
    w2.flush();
    const auto after = s2.load("g:2");
    REQUIRE(after.size() == 5);
    CHECK_FALSE(ania::has_images(after[1]));
    CHECK(after[1].text().find(ania::image_marker_for(img)) != std::string::npos);
}

TEST_CASE("multimodal: images a tool produces are image parts of the next round", "[agent][images]") {
    rig r;
    const std::string img = image_data_uri('B');
    ania::tool shot{"screenshot", "", ania::json::object(), {}};
    shot.image_handler = [img](std::string_view) { return ania::tool_output{"截图完成", {img}}; };
    r.tools.push_back(shot);
    r.model.calls({{"screenshot", "{}"}}).reply("I see it");
    auto a = r.make();
    REQUIRE(a.chat("截个图").ok());
    const auto& second = r.model.requests()[1];
    REQUIRE(second.size() == 4);
    CHECK(second[2].content == "截图完成");
    CHECK(second[3].role == role::user);
    CHECK(ania::has_images(second[3]));
    const auto stored = r.stored();
    REQUIRE(stored.size() == 5);
    CHECK_FALSE(ania::has_images(stored[3]));
    CHECK(ania::is_valid_transcript(stored));
}

TEST_CASE("describe_images: the main model reads descriptions; an image seen again is not described twice", "[agent][images]") {
    struct vision_traits : test_traits {
        using images = ania::describe_images<scripted_client>;
    };
    rig r;
    scripted_client vision;
    vision.reply("一只橘猫").reply("一张图表");
    ania::tool shot{"screenshot", "", ania::json::object(), {}};
    const std::string cat = image_data_uri('C'), chart = image_data_uri('D');
    shot.image_handler = [chart](std::string_view) { return ania::tool_output{"截图完成", {chart}}; };
    r.tools.push_back(shot);
    r.model.reply("橘猫很可爱").calls({{"screenshot", "{}"}}).reply("图表显示上升").reply("还是那只猫");
    ania::basic_agent<vision_traits> a(r.writer, {.client = r.model, .images = ania::describe_images<scripted_client>(vision), .tools = ania::tool_registry(r.tools)},
                                       "g:1");
    REQUIRE(a.chat(ania::user_input("这是什么", {cat})).ok());
    const message& sent = r.model.requests()[0].back();
    CHECK(sent.form == ania::content_form::text);
    CHECK(sent.content == "这是什么\n" + ania::image_marker_for(cat) + " 一只橘猫");
    CHECK(vision.calls() == 1);
    CHECK(ania::has_images(vision.requests()[0][0]));
    REQUIRE(a.chat("截图").ok());
    CHECK(r.model.requests()[2].back().content == "截图完成\n" + ania::image_marker_for(chart) + " 一张图表");
    REQUIRE(a.chat(ania::user_input("再看一次", {cat})).ok());
    CHECK(vision.calls() == 2);  // the cat came from the cache
    for (const message& m : r.stored()) CHECK_FALSE(ania::has_images(m));
}

TEST_CASE("tools added to one session at run time shadow the static ones", "[agent][tools]") {
    rig r;
    r.tools.push_back(echo_tool());
    r.model.calls({{"echo", "{}"}}).reply("ok");
    auto a = r.make();
    a.add_tool({"echo", "mine", ania::json::object(), [](std::string_view) { return std::string("session echo"); }});
    REQUIRE(a.tools().tools().size() == 1);
    REQUIRE(a.chat("x").ok());
    CHECK(r.stored()[2].content == "session echo");
    CHECK(a.remove_tool("echo"));
    CHECK(a.tools().tools().size() == 1);  // the static one again
    CHECK(a.tools().tools()[0].description == "echoes its argument");
}

TEST_CASE("clear forgets the window and the stored history", "[agent]") {
    rig r;
    r.model.reply("a").reply("b");
    auto a = r.make();
    REQUIRE(a.chat("1").ok());
    a.clear();
    CHECK(a.window().empty());
    CHECK(r.stored().empty());
    REQUIRE(a.chat("2").ok());
    CHECK(r.model.requests()[1].size() == 1);
}

TEST_CASE("the agent types: traits, named slots, aliases, and the concepts of their slots", "[agent][compile-time]") {
    using by_slots = ania::agent_of<ania::slot::hooks<ania::no_hooks>, ania::slot::client<scripted_client>,
                                    ania::slot::compressor<ania::truncate_oldest_half>>;
    STATIC_REQUIRE(std::is_same_v<by_slots::client_type, scripted_client>);
    STATIC_REQUIRE(std::is_same_v<by_slots::hooks_type, ania::no_hooks>);
    STATIC_REQUIRE(std::is_same_v<by_slots::compressor_type, ania::truncate_oldest_half>);
    STATIC_REQUIRE(std::is_same_v<by_slots::store_type, ania::ram_store>);  // the default
    STATIC_REQUIRE(std::is_same_v<ania::agent<scripted_client>::compressor_type, ania::default_compressor<scripted_client>>);
    STATIC_REQUIRE(std::is_same_v<ania::slot_traits<>::log, ania::default_agent_traits::log>);
    // Stateless policies cost no space: the same agent with no_hooks and no_events is smaller by the hook set.
    STATIC_REQUIRE(sizeof(by_slots) < sizeof(ania::agent<scripted_client>));
    STATIC_REQUIRE(ania::agent_hooks<ania::hook_set>);
    STATIC_REQUIRE(ania::image_policy<ania::describe_images<scripted_client>>);
    STATIC_REQUIRE(ania::tool_source<ania::tool_registry>);
    STATIC_REQUIRE(ania::event_sink<recorded_events>);
    STATIC_REQUIRE(ania::log_policy<capture_log>);
    // Near misses.
    struct hooks_without_stop {
        std::string session_start(const ania::session_start_event&);
        ania::prompt_decision user_prompt_submit(const ania::user_prompt_event&);
        ania::tool_decision pre_tool_use(const ania::tool_use_event&);
        void post_tool_use(const ania::tool_result_event&);
        void pre_compact(const ania::pre_compact_event&);
    };
    STATIC_REQUIRE_FALSE(ania::agent_hooks<hooks_without_stop>);
    struct sink_without_repairs {
        void operator()(const ania::compression_event&);
        void operator()(const ania::persistence_event&);
    };
    STATIC_REQUIRE_FALSE(ania::event_sink<sink_without_repairs>);
    struct images_returning_text {
        void prepare_user(ania::message&, const ania::log_sink&);
        std::string from_tool(std::vector<std::string>, const ania::log_sink&);
    };
    STATIC_REQUIRE_FALSE(ania::image_policy<images_returning_text>);
    struct mutable_log {
        void operator()(ania::log_level, std::string_view);  // not const
    };
    STATIC_REQUIRE_FALSE(ania::log_policy<mutable_log>);
}

TEST_CASE("check_inside_tool_loop: a long tool loop compresses the history between calls", "[agent][compress]") {
    rig r;
    r.tools.push_back(echo_tool());
    r.model.reply("a", {100, 1, 101, {}}).reply("b", {100, 1, 101, {}});
    r.model.calls({{"echo", "{}"}}, {500, 1, 501, {}});  // 500 + the round > 0.8 x 600
    r.model.reply("summary of a and b");
    r.model.reply("done", {200, 1, 201, {}});
    auto opt = ania::agent_options{.window = {.max_context_tokens = 600}};
    opt.window.check_inside_tool_loop = true;
    auto a = r.make(opt);
    REQUIRE(a.chat("1").ok());
    REQUIRE(a.chat("2").ok());
    const auto res = a.chat("3");
    REQUIRE(res.ok());
    CHECK(res.compressions == 1);
    REQUIRE(r.events.compressions->size() == 1);
    CHECK(r.events.compressions->front().why == ania::compression_event::trigger::tool_loop);
    // The call after the tool round already carried the summary instead of the first two turns.
    const auto& last = r.model.requests().back();
    CHECK(last[0].content.find("summary of a and b") != std::string::npos);
    const auto stored = r.stored();
    REQUIRE(stored.size() == 5);  // the summary, then the whole third turn
    CHECK(stored[1].content == "3");
}

TEST_CASE("a cut is written as drop_front through the writer when the store holds exactly the window", "[agent][compress][persist]") {
    struct counting_store : ania::ram_store {
        std::shared_ptr<std::atomic<int>> drops = std::make_shared<std::atomic<int>>(0), replaces = std::make_shared<std::atomic<int>>(0);
        void drop_front(std::string_view s, std::size_t k) {
            ++*drops;
            ram_store::drop_front(s, k);
        }
        void replace(std::string_view s, std::span<const message> m) {
            ++*replaces;
            ram_store::replace(s, m);
        }
    };
    struct cut_traits : test_traits {
        using store = counting_store;
        using compressor = ania::truncate_oldest_half;
    };
    STATIC_REQUIRE(ania::prefix_dropping_store<ania::background_writer<counting_store>>);
    counting_store store;
    ania::background_writer<counting_store> w(store);
    scripted_client m;
    for (int i = 0; i < 3; ++i) m.reply("r" + std::to_string(i), {100, 1, 101, {}});
    m.reply("big", {900, 1, 901, {}}).reply("after");
    ania::basic_agent<cut_traits> a(w, {.client = m}, "g:1", {.window = {.max_context_tokens = 1000}});
    for (int i = 0; i < 4; ++i) REQUIRE(a.chat("t" + std::to_string(i)).ok());
    REQUIRE(a.chat("next").ok());
    w.flush();
    CHECK(*store.drops == 1);
    CHECK(*store.replaces == 0);
    CHECK(store.load("g:1") == std::vector<message>(a.window().messages().begin(), a.window().messages().end()));
}

TEST_CASE("hook_set: a throwing hook does not keep the later ones of its event from running", "[agent][hooks]") {
    ania::hook_set hooks;
    int later = 0;
    hooks.on_stop([](const ania::stop_event&) { throw std::runtime_error("first"); });
    hooks.on_stop([&](const ania::stop_event&) { ++later; });
    hooks.on_user_prompt_submit([](const ania::user_prompt_event&) -> ania::prompt_decision { throw std::runtime_error("x"); });
    hooks.on_user_prompt_submit([](const ania::user_prompt_event&) { return ania::prompt_decision::deny("second says no"); });
    CHECK_THROWS_WITH(hooks.stop({"g:1", "", ania::turn_end::replied}), "first");
    CHECK(later == 1);
    CHECK(hooks.user_prompt_submit({"g:1", "t"}).reason == "second says no");
}

TEST_CASE("steer: messages handed in after a tool batch join the turn before the next call", "[agent][tools]") {
    rig r;
    r.tools.push_back(echo_tool());
    r.model.calls({{"echo", "{}"}, {"echo", "{}"}}).reply("done");
    auto a = r.make();
    int asked = 0;
    ania::chat_options copt;
    copt.steer = [&] {
        ++asked;
        return asked == 1 ? std::vector<ania::user_input>{"also this"} : std::vector<ania::user_input>{};
    };
    REQUIRE(a.chat("start", copt).ok());
    CHECK(asked == 1);  // once per tool batch: one batch here
    const auto& second = r.model.requests()[1];
    REQUIRE(second.size() == 5);  // user, calls, two results (the batch intact), then the steered message
    CHECK(second[2].role == role::tool);
    CHECK(second[3].role == role::tool);
    CHECK(second[4].content == "also this");
    const auto stored = r.stored();
    REQUIRE(stored.size() == 6);
    CHECK(stored[4].content == "also this");
    CHECK(ania::is_valid_transcript(stored));
}
