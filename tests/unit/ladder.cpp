// tests/unit/ladder.cpp -- the compression ladder (#31): clear_tool_results, ladder<...>, the summary's checks and
// breaker, and the ladder through an agent on a real SQLite file (the stored copy equals the window).
#include <catch2/catch.hpp>

#include <chrono>
#include <random>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include <ania/compressor/clear_tool_results.hpp>
#include <ania/config.hpp>
#include <ania/compressor/default_compressor.hpp>
#include <ania/compressor/ladder.hpp>
#include <ania/compressor/llm_summary.hpp>
#include <ania/compressor/summary_breaker.hpp>
#include <ania/compressor/truncate_oldest_half.hpp>
#include <ania/context/maybe_compress.hpp>
#include <ania/context/token_window.hpp>
#include <ania/json.hpp>
#include <ania/store/sqlite_store.hpp>
#include <ania/transcript.hpp>

#include "agent_rig.hpp"
#include "bench_data.hpp"
#include "scripted_client.hpp"
#include "temp_dir.hpp"

using ania::message;
using ania_test::scripted_client;

namespace {

/// One exchange: a user message, an assistant calling `names` (ids <prefix>_<k>), their results, a reply.
void exchange(std::vector<message>& h, const std::string& prefix, std::vector<std::string> names, std::size_t result_bytes = 400) {
    h.push_back(message::user("question " + prefix));
    std::vector<ania::tool_call> cs;
    for (std::size_t k = 0; k < names.size(); ++k)
        cs.push_back({prefix + "_" + std::to_string(k), "function", names[k], R"({"q":")" + prefix + R"("})", {}, {}});
    h.push_back(message::assistant_calls(std::move(cs)));
    for (std::size_t k = 0; k < names.size(); ++k) {
        message r = message::tool_result(prefix + "_" + std::to_string(k), std::string(result_bytes, 'x'));
        h.push_back(std::move(r));
    }
    h.push_back(message::assistant("answer " + prefix));
}

/// The window the agent would have: its counts as prefix sums, the counter as compress_input::count.
struct windowed {
    ania::token_window<> w;
    explicit windowed(std::vector<message> h, std::int64_t max_context = 0) : w({.max_context_tokens = max_context}) {
        w.assign(std::move(h));
    }
    ania::compress_input input(std::int64_t target = -1) const {
        return {w.messages(), w.prefix_tokens(), w.context_tokens(), target, w.input_count()};
    }
};

std::size_t tool_results(std::span<const message> h) {
    std::size_t n = 0;
    for (const message& m : h) n += m.role == ania::role::tool;
    return n;
}

/// A random valid transcript: exchanges of 0..4 calls (some parallel), plain turns, system notes.
std::vector<message> random_transcript(std::mt19937& rng, std::size_t exchanges) {
    std::vector<message> h;
    const char* names[] = {"search", "memory_save", "weather", "calc"};
    for (std::size_t e = 0; e < exchanges; ++e) {
        const std::size_t calls = rng() % 5;
        if (calls == 0) {
            h.push_back(message::user("hi " + std::to_string(e)));
            h.push_back(message::assistant("hello " + std::to_string(e)));
            continue;
        }
        std::vector<std::string> ns;
        for (std::size_t k = 0; k < calls; ++k) ns.emplace_back(names[rng() % 4]);
        exchange(h, "e" + std::to_string(e), ns, 10 + rng() % 500);
    }
    return h;
}

} // namespace

TEST_CASE("clear_tool_results: keeps the newest `keep` results, clears the older ones, every call keeps its result", "[ladder][clear]") {
    std::vector<message> h;
    for (int e = 0; e < 6; ++e) exchange(h, "c" + std::to_string(e), {"search", "search"});
    const std::size_t results = tool_results(h);
    for (const std::size_t keep : {std::size_t{0}, std::size_t{1}, std::size_t{3}, results - 1, results, results + 5}) {
        CAPTURE(keep);
        ania::clear_tool_results_options o;
        o.keep = keep;
        ania::clear_tool_results rung(o);
        windowed w(h);
        const auto r = rung.compress(w.input());
        REQUIRE(r.ok);
        const std::size_t expected = keep >= results ? 0 : results - keep;
        CHECK(r.edits.size() == expected);
        ania::compression_result applied = r;
        w.w.apply(std::move(applied));
        CHECK(ania::is_valid_transcript(w.w.messages()));
        // Exactly the newest `keep` results are as they were; the others hold the placeholder and their call id.
        std::size_t seen = 0;
        for (std::size_t i = h.size(); i-- > 0;) {
            if (h[i].role != ania::role::tool) continue;
            const message& now = w.w[i];
            CHECK(now.tool_call_id == h[i].tool_call_id);
            if (seen++ < keep) CHECK(now.content == h[i].content);
            else CHECK(now.content == o.placeholder);
        }
        // The cached counts moved with the edits: the window's total equals a recount.
        std::int64_t recount = 0;
        for (const message& m : w.w.messages()) recount += w.w.counter().count(m);
        CHECK(w.w.estimated_tokens() == recount);
    }
}

TEST_CASE("clear_tool_results: exclude, clear_at_least, clear_arguments, already cleared, disabled", "[ladder][clear]") {
    std::vector<message> h;
    exchange(h, "a", {"memory_save", "search"});
    exchange(h, "b", {"search", "memory_save", "search"});
    exchange(h, "c", {"search"});
    ania::clear_tool_results_options o;
    o.keep = 1;
    SECTION("exclude: a listed tool's results are never cleared") {
        o.exclude = {"memory_save"};
        const auto r = ania::clear_tool_results(o).compress(windowed(h).input());
        for (const auto& e : r.edits) {
            const std::string& id = *h[e.index].tool_call_id;
            CHECK((id != "a_0" && id != "b_1"));
        }
        CHECK(r.edits.size() == 3);  // a_1, b_0, b_2 (c_0 is the newest, kept)
    }
    SECTION("clear_at_least: nothing when less would go") {
        windowed w(h);
        const auto all = ania::clear_tool_results(o).compress(w.input());
        const std::int64_t removed = ania::detail::edits_removed(w.input(), all.edits);
        REQUIRE(removed > 0);
        o.clear_at_least = removed;
        CHECK(ania::clear_tool_results(o).compress(w.input()).edits.size() == all.edits.size());
        o.clear_at_least = removed + 1;
        const auto none = ania::clear_tool_results(o).compress(w.input());
        CHECK(none.ok);
        CHECK_FALSE(none.changes());
    }
    SECTION("clear_arguments: the cleared calls' arguments become {}, in one edit per assistant message") {
        o.clear_arguments = true;
        o.exclude = {"memory_save"};
        const auto r = ania::clear_tool_results(o).compress(windowed(h).input());
        std::size_t assistants = 0;
        for (std::size_t k = 0; k < r.edits.size(); ++k) {
            if (k > 0) CHECK(r.edits[k - 1].index < r.edits[k].index);  // ascending, each once
            if (r.edits[k].content) continue;  // a result's text
            const message& m = *r.edits[k].replacement;
            REQUIRE(m.role == ania::role::assistant);
            ++assistants;
            for (const auto& c : m.tool_calls) CHECK((c.name == "memory_save" ? c.arguments != "{}" : c.arguments == "{}"));
        }
        CHECK(assistants == 2);  // a's and b's calls; c's result is kept, so are its arguments
    }
    SECTION("a second activation finds nothing new to clear") {
        windowed w(h);
        auto r = ania::clear_tool_results(o).compress(w.input());
        REQUIRE(r.changes());
        w.w.apply(std::move(r));
        CHECK_FALSE(ania::clear_tool_results(o).compress(w.input()).changes());
    }
    SECTION("a result no bigger than the placeholder is left as it is") {
        std::vector<message> small;
        exchange(small, "s", {"search", "search"}, 3);
        exchange(small, "t", {"search"}, 3);
        o.keep = 0;
        CHECK_FALSE(ania::clear_tool_results(o).compress(windowed(small).input()).changes());
    }
    SECTION("disabled, or under its trigger: nothing") {
        o.enabled = false;
        CHECK_FALSE(ania::clear_tool_results(o).compress(windowed(h).input()).changes());
        o.enabled = true;
        o.trigger = 1'000'000;
        CHECK_FALSE(ania::clear_tool_results(o).compress(windowed(h).input()).changes());
    }
}

TEST_CASE("clear_tool_results: 80,000 calls in one message are cleared in linear time, in any result order", "[ladder][clear][bad-input]") {
    std::vector<ania::tool_call> cs;
    constexpr std::size_t n = 80'000;
    for (std::size_t k = 0; k < n; ++k) cs.push_back({"id" + std::to_string(k), "function", "f", "{\"a\":1}", {}, {}});
    std::vector<message> h{message::user("go"), message::assistant_calls(std::move(cs))};
    for (std::size_t k = n; k-- > 0;) h.push_back(message::tool_result("id" + std::to_string(k), std::string(200, 'r')));  // reversed
    h.push_back(message::assistant("done"));
    ania::clear_tool_results_options o;
    o.keep = 0;
    o.clear_arguments = true;
    const auto r = ania::clear_tool_results(o).compress(windowed(h).input());
    REQUIRE(r.edits.size() == n + 1);
    CHECK(r.edits.front().index == 1);
    for (const auto& c : r.edits.front().replacement->tool_calls) REQUIRE(c.arguments == "{}");
}

TEST_CASE("ladder: the next rung runs only while the context is still over the target", "[ladder]") {
    std::vector<message> h;
    for (int e = 0; e < 8; ++e) exchange(h, "x" + std::to_string(e), {"search"}, 2000);
    windowed w(h);
    const std::int64_t before = w.w.context_tokens();
    scripted_client model;
    model.otherwise("摘要");
    ania::clear_tool_results_options o;
    o.keep = 1;
    ania::ladder<ania::clear_tool_results, ania::llm_summary<scripted_client>, ania::truncate_oldest_half> l(
        ania::clear_tool_results(o), ania::llm_summary<scripted_client>(model), ania::truncate_oldest_half{});
    SECTION("the clearing is enough: no summary call") {
        const auto r = l.compress(w.input(before - 10));
        CHECK(r.ok);
        CHECK(r.edits.size() == 7);
        CHECK(r.keep_from == 0);
        CHECK(model.requests().empty());
        REQUIRE(r.steps.size() == 1);
        CHECK(r.steps[0].rung == "clear_tool_results");
        CHECK(r.steps[0].tokens_removed > 10);
    }
    SECTION("still over after the clearing: the summary runs on the edited history and replaces it") {
        const auto r = l.compress(w.input(10));
        CHECK(r.ok);
        CHECK(model.requests().size() == 1);
        CHECK(r.keep_from == h.size());
        CHECK(r.edits.empty());  // everything the edits touched is summarised away
        REQUIRE(r.steps.size() == 2);
        CHECK(r.steps[1].rung == "llm_summary");
        CHECK(r.steps[1].changed);
    }
    SECTION("the summary fails: truncation runs, and the edits it keeps stay") {
        model.fail("down");
        const auto r = l.compress(w.input(10));
        CHECK(r.ok);
        REQUIRE(r.steps.size() == 3);
        CHECK_FALSE(r.steps[1].ok);
        CHECK(r.error.find("down") != std::string::npos);
        CHECK(r.keep_from == ania::truncate_oldest_half::cut(h));
        for (const auto& e : r.edits) CHECK(e.index >= r.keep_from);
        CHECK_FALSE(r.edits.empty());
        ania::compression_result applied = r;
        w.w.apply(std::move(applied));
        CHECK(ania::is_valid_transcript(w.w.messages()));
    }
    SECTION("called below its target (an early trigger): the dearer rungs never run") {
        const auto r = l.compress(w.input(before + 1));
        CHECK(model.requests().empty());
        CHECK(r.keep_from == 0);
    }
}

TEST_CASE("ladder: a transcript stays valid after every rung (random transcripts)", "[ladder][property]") {
    std::mt19937 rng(20261205);
    for (int round = 0; round < 200; ++round) {
        std::vector<message> h = random_transcript(rng, 1 + rng() % 30);
        REQUIRE(ania::is_valid_transcript(h));
        ania::clear_tool_results_options o;
        o.keep = rng() % 4;
        o.clear_arguments = rng() % 2;
        if (rng() % 3 == 0) o.exclude = {"memory_save"};
        windowed w(h);
        // Each rung alone, then the whole ladder with a failing summary (so truncation runs after the edits).
        auto cleared = ania::clear_tool_results(o).compress(w.input());
        windowed w1(h);
        w1.w.apply(std::move(cleared));
        REQUIRE(ania::is_valid_transcript(w1.w.messages()));
        REQUIRE(w1.w.size() == h.size());
        scripted_client down;
        ania::ladder<ania::clear_tool_results, ania::llm_summary<scripted_client>, ania::truncate_oldest_half> l(
            ania::clear_tool_results(o), ania::llm_summary<scripted_client>(down), ania::truncate_oldest_half{});
        auto r = l.compress(w.input(0));
        windowed w2(h);
        w2.w.apply(std::move(r));
        REQUIRE(ania::is_valid_transcript(w2.w.messages()));
    }
}

TEST_CASE("llm_summary checks: an empty, too long, refusing or wrong-script summary is rejected and truncation runs", "[ladder][verify]") {
    std::vector<message> h;
    for (int i = 0; i < 10; ++i) {
        h.push_back(message::user("我们明天去公园散步，记得带伞，天气预报说下午有雨。第" + std::to_string(i) + "次"));
        h.push_back(message::assistant("好的，我会提醒你带伞，也可以考虑改到上午出发。"));
    }
    ania::summary_options opt;
    opt.max_ratio = 0.5;
    opt.refusal_prefixes = ania::default_refusal_prefixes();
    opt.same_script = true;
    const auto run = [&](std::string summary) {
        scripted_client model;
        model.reply(std::move(summary));
        ania::with_fallback<ania::llm_summary<scripted_client>, ania::truncate_oldest_half> c(
            ania::llm_summary<scripted_client>(model, opt));
        windowed w(h);
        return c.compress(w.input());
    };
    const auto good = run("用户计划明天去公园散步，需带伞，可能改到上午。");
    CHECK(good.ok);
    CHECK(good.prefix.size() == 1);
    CHECK(good.error.empty());
    const std::string transcript_sample = "我们明天去公园散步";
    std::string too_long;
    for (int i = 0; i < 40; ++i) too_long += "用户计划明天去公园散步，需带伞。";
    for (const auto& [summary, why] : std::vector<std::pair<std::string, std::string>>{
             {"   ", "empty"}, {too_long, "not shorter"}, {"抱歉，我无法完成这个请求。", "refusal"},
             {"I'm sorry, but I can't help with that.", "refusal"},
             {"The user plans a walk in the park tomorrow and should bring an umbrella.", "another script"}}) {
        CAPTURE(summary);
        const auto r = run(summary);
        CHECK(r.ok);                   // the fallback ran
        CHECK(r.prefix.empty());       // no summary kept
        CHECK(r.keep_from == ania::truncate_oldest_half::cut(h));
        CHECK(r.error.find(why) != std::string::npos);
    }
}

TEST_CASE("summary_breaker: opens after K failures, skips the model while cooling down, one trial after it", "[ladder][breaker]") {
    auto now = std::chrono::steady_clock::time_point{};
    auto breaker = std::make_shared<ania::summary_breaker>(3, std::chrono::seconds(30), [&] { return now; });
    ania::summary_options opt;
    opt.breaker = breaker;
    auto shared = std::make_shared<const ania::summary_options>(opt);
    scripted_client model;
    model.otherwise("");  // every call fails
    // Two sessions' compressors share the options, so the breaker: the network is down for both.
    ania::default_compressor<scripted_client> a(model, shared), b(model, shared);
    std::vector<message> h{message::user("a"), message::assistant("b"), message::user("c"), message::assistant("d")};
    windowed w(h);
    const auto calls = [&] { return model.requests().size(); };
    CHECK(a.compress(w.input()).ok);  // truncation after the failed summary
    CHECK(b.compress(w.input()).ok);
    CHECK_FALSE(breaker->is_open());
    CHECK(a.compress(w.input()).ok);
    CHECK(breaker->is_open());
    CHECK(calls() == 3);
    // Open: no call, the failure says why, truncation still runs.
    const auto skipped = b.compress(w.input());
    CHECK(skipped.ok);
    CHECK(calls() == 3);
    CHECK(skipped.error.find("breaker is open") != std::string::npos);
    REQUIRE(skipped.steps.size() == 3);
    CHECK_FALSE(skipped.steps[1].ok);
    now += std::chrono::seconds(29);
    CHECK(a.compress(w.input()).ok);
    CHECK(calls() == 3);
    // After the cool-down one trial; it fails: open for another cool-down.
    now += std::chrono::seconds(2);
    CHECK(a.compress(w.input()).ok);
    CHECK(calls() == 4);
    CHECK(breaker->is_open());
    CHECK(breaker->openings() == 2);
    CHECK(b.compress(w.input()).ok);
    CHECK(calls() == 4);
    // The model is back: the next trial succeeds and closes it.
    now += std::chrono::seconds(31);
    model.reply("summary");
    const auto back = b.compress(w.input());
    CHECK(back.prefix.size() == 1);
    CHECK(calls() == 5);
    CHECK_FALSE(breaker->is_open());
    CHECK(breaker->consecutive_failures() == 0);
}

TEST_CASE("the ladder through an agent on SQLite: an early trigger clears, the stored copy equals the window after reload", "[ladder][agent][sqlite]") {
    ania_test::temp_dir dir;
    const std::string db = dir.file("ladder.db");
    struct traits : ania_test::test_traits {
        using store = ania::sqlite_store;
    };
    ania::sqlite_store store(db);
    ania::background_writer<ania::sqlite_store> writer(store);
    scripted_client model;
    ania_test::recorded_events events;
    std::vector<std::size_t> edited;
    std::vector<std::string> rungs;
    ania::agent_options opt;
    opt.system_prompt = "base";
    opt.window.max_context_tokens = 100'000;  // threshold 80,000: the summary is never due here
    opt.clear_tool_results.enabled = true;
    opt.clear_tool_results.trigger = 2'000;
    opt.clear_tool_results.keep = 2;
    const std::string big(3000, 'y');
    ania::tool search{"search", "searches", {}, [&](std::string_view) { return big; }};
    ania::event_functions ev;
    ev.compression = [&](const ania::compression_event& e) {
        edited.push_back(e.edited);
        for (const auto& s : e.steps) rungs.emplace_back(s.rung);
    };
    struct ev_traits : traits {
        using events = ania::event_functions;
    };
    int pre_compacts = 0;
    ania::hook_set hooks;
    hooks.on_pre_compact([&](const ania::pre_compact_event&) { ++pre_compacts; });
    {
        ania::basic_agent<ev_traits> a(writer, {.client = model, .tools = ania::tool_registry({search}), .hooks = hooks, .events = ev,
                                                .log = ania_test::capture_log{}},
                                       "g:1", opt);
        for (int t = 0; t < 5; ++t) {
            model.calls({{"search", "{}"}}, {0, 0, 0, {}}).reply("done " + std::to_string(t), {0, 0, 0, {}});
            REQUIRE(a.chat("turn " + std::to_string(t)).ok());
        }
        REQUIRE_FALSE(edited.empty());
        CHECK(pre_compacts == 0);  // a clearing below the threshold is not a compaction
        CHECK(rungs.front() == "clear_tool_results");
        // Every result but the newest `keep` is cleared; no summary was asked for.
        std::size_t cleared = 0, kept = 0;
        for (const message& m : a.window().messages())
            if (m.role == ania::role::tool) (m.content == opt.clear_tool_results.placeholder ? cleared : kept)++;
        CHECK(kept >= 2);
        CHECK(cleared >= 1);
        CHECK(ania::is_valid_transcript(a.window().messages()));
        for (const auto& r : model.requests()) CHECK(r.at(0).content == "base");  // no summary request
        writer.flush();
        const std::vector<message> window(a.window().messages().begin(), a.window().messages().end());
        CHECK(store.load("g:1") == window);
    }
}

TEST_CASE("compressor.clear_tool_results.* and compressor.verify.* reach the agent's compressor", "[ladder][config]") {
    const ania::config cfg = ania::parse_config(R"({"compressor": {
        "clear_tool_results": {"enabled": true, "trigger": 5000, "keep": 2, "exclude": ["memory_save"],
                               "clear_at_least": 100, "clear_arguments": true, "placeholder": "[cleared]"},
        "verify": {"max_ratio": 0.5, "reject_refusals": true, "same_script": true, "breaker_failures": 4,
                   "breaker_cool_down_seconds": 120}}})");
    const auto o = ania::from_config<ania::agent_options>(cfg);
    CHECK(o.clear_tool_results.enabled);
    CHECK(o.clear_tool_results.trigger == 5000);
    CHECK(o.clear_tool_results.keep == 2);
    CHECK(o.clear_tool_results.exclude == std::vector<std::string>{"memory_save"});
    CHECK(o.clear_tool_results.clear_at_least == 100);
    CHECK(o.clear_tool_results.clear_arguments);
    CHECK(o.clear_tool_results.placeholder == "[cleared]");
    REQUIRE(o.summary);
    CHECK(o.summary->max_ratio == 0.5);
    CHECK(o.summary->refusal_prefixes == ania::default_refusal_prefixes());
    CHECK(o.summary->same_script);
    REQUIRE(o.summary->breaker);
    // An agent built from them: its compressor is the ladder with these rungs.
    ania_test::rig r;
    auto a = r.make(o);
    CHECK(a.compressor().clearing().options().placeholder == "[cleared]");
    CHECK(a.compressor().trigger_tokens() == 5000);
    CHECK(&a.compressor().primary().options() == o.summary.get());
    // The defaults: the spec's two rungs, no checks.
    const auto d = ania::from_config<ania::agent_options>(ania::parse_config("{}"));
    CHECK_FALSE(d.clear_tool_results.enabled);
    CHECK_FALSE(d.summary);
    CHECK(ania::to_json(ania::parse_config("{}"))["compressor"]["clear_tool_results"]["keep"] == 3);
    CHECK(d.clear_tool_results.placeholder == ania::clear_tool_results_options{}.placeholder);
    // Bad input names the key.
    const auto fails = [](const char* text, const char* key) {
        try {
            (void)ania::parse_config(text);
            FAIL("accepted: " << text);
        } catch (const ania::error& e) {
            CHECK_THAT(e.what(), Catch::Contains(key));
        }
    };
    fails(R"({"compressor": {"clear_tool_results": {"keeep": 2}}})", "compressor.clear_tool_results.keeep");
    fails(R"({"compressor": {"clear_tool_results": {"exclude": "memory_save"}}})", "compressor.clear_tool_results.exclude");
    fails(R"({"compressor": {"clear_tool_results": {"exclude": ["a", 3]}}})", "compressor.clear_tool_results.exclude[1]");
    fails(R"({"compressor": {"clear_tool_results": {"keep": -1}}})", "compressor.clear_tool_results.keep");
    fails(R"({"compressor": {"verify": {"max_ratio": 1.5}}})", "compressor.verify.max_ratio");
}

namespace {

/// 50 scripted turns with compactions: what a provider's prefix cache could reuse from one request to the
/// next. `heads`: distinct first history messages the main model was sent (each new one starts a new cached
/// prefix); `reused`: bytes each request shares with the one before, from the start (system prompt, history).
struct prefix_figures {
    std::size_t requests = 0, compactions = 0, heads = 0, reused = 0, total = 0;
    std::size_t breaks = 0, reused_at_breaks = 0;  // requests that do not extend the one before, and what they still share
};

prefix_figures fifty_turns(std::size_t stack, std::size_t* stable_at_end = nullptr) {
    scripted_client model;
    auto summaries = std::make_shared<int>(0);
    auto prefixes = std::make_shared<std::vector<std::string>>();
    auto heads = std::make_shared<std::set<std::string>>();
    model.otherwise([=](const ania::chat_request& r) {
        const auto segs = r.messages.segments();
        if (!segs[0].empty() && segs[0][0].content == ania::summary_prompt_zh)
            return ania::completion::success(message::assistant("要点" + std::to_string(++*summaries) + " " + std::string(120, 's')));
        std::string bytes;
        for (std::size_t s = 0; s < 2; ++s)
            for (const message& m : segs[s]) bytes += ania::dump(m);
        prefixes->push_back(std::move(bytes));
        if (!segs[1].empty()) heads->insert(ania::dump(segs[1][0]));
        return ania::completion::success(message::assistant("好的 " + std::string(200, 'r')), {});
    });
    ania::summary_options so;
    so.keep_last_turns = 2;
    so.stack_summaries = stack;
    ania::agent_options opt;
    opt.system_prompt = "你是 Ania。" + std::string(300, 'p');
    opt.window.max_context_tokens = 1000;
    opt.summary = std::make_shared<const ania::summary_options>(so);
    ania_test::rig rig;
    rig.model = model;
    prefix_figures f;
    {
        ania_test::test_agent a = rig.make(opt);
        for (int t = 0; t < 50; ++t) {
            const ania::chat_result r = a.chat("第 " + std::to_string(t) + " 轮 " + std::string(200, 'u'));
            REQUIRE(r.ok());
            f.compactions += static_cast<std::size_t>(r.compressions);
        }
        if (stable_at_end) *stable_at_end = a.window().stable_prefix();
    }
    f.requests = prefixes->size();
    f.heads = heads->size();
    for (std::size_t i = 0; i < prefixes->size(); ++i) {
        f.total += (*prefixes)[i].size();
        if (i == 0) continue;
        const std::string& a = (*prefixes)[i - 1];
        const std::string& b = (*prefixes)[i];
        const auto common = static_cast<std::size_t>(std::mismatch(a.begin(), a.end(), b.begin(), b.end()).first - a.begin());
        f.reused += common;
        if (common < a.size()) {
            ++f.breaks;
            f.reused_at_breaks += common;
        }
    }
    return f;
}

} // namespace

TEST_CASE("sticky cuts: stacked summaries keep the request's head across compactions (50 scripted turns)", "[ladder][cache]") {
    const prefix_figures plain = fifty_turns(0);
    std::size_t stable = 0;
    const prefix_figures sticky = fifty_turns(4, &stable);
    const auto describe = [](const prefix_figures& f) {
        std::ostringstream o;
        o << f.compactions << " compactions, " << f.heads << " distinct heads, " << f.breaks << " breaks reusing "
          << (f.breaks ? f.reused_at_breaks / f.breaks : 0) << " bytes each, " << f.reused << " of " << f.total << " bytes reused";
        return o.str();
    };
    INFO("plain: " << describe(plain) << "; stacked: " << describe(sticky));
    REQUIRE(plain.compactions >= 8);  // the run compacts often enough to tell
    CHECK(plain.requests == 50);
    CHECK(sticky.requests == 50);
    CHECK(plain.heads == plain.compactions + 1);  // every compaction starts a new head
    // Stacked: a new head only when the stack folds (every 4th compaction) — and the first user message.
    CHECK(sticky.heads <= sticky.compactions / 4 + 2);
    CHECK(sticky.heads * 2 < plain.heads);
    // A compaction that keeps the head leaves the system prompt and the stacked summaries to the cache.
    CHECK(plain.breaks == plain.compactions);
    CHECK(sticky.reused_at_breaks > plain.reused_at_breaks);
    CHECK(stable >= 1);
}

TEST_CASE("stacked summaries: the head is kept byte for byte, only what follows is summarised, a full stack folds", "[ladder][cache]") {
    scripted_client model;
    model.reply("新").reply("合").reply("再");
    ania::summary_options so;
    so.stack_summaries = 2;
    ania::llm_summary<scripted_client> sum(model, so);
    const std::string pfx(so.prefix.view());
    std::vector<message> h = {message::user(pfx + "旧"), message::user("q1"), message::assistant("a1")};
    windowed w(h);
    ania::compression_result r = sum.compress(w.input());
    REQUIRE(r.ok);
    REQUIRE(r.prefix.size() == 2);
    CHECK(r.prefix[0] == h[0]);
    CHECK(r.prefix[1].content == pfx + "新");
    CHECK(r.keep_from == 3);
    // The request summarised q1 and a1 only: the old summary is not in its transcript.
    const std::string sent = model.requests().back().back().content;
    CHECK(sent.find("q1") != std::string::npos);
    CHECK(sent.find("旧") == std::string::npos);
    // Two at the head (the stack is full): everything folds into one.
    h = {message::user(pfx + "旧"), message::user(pfx + "新"), message::user("q2"), message::assistant("a2")};
    windowed w2(h);
    r = sum.compress(w2.input());
    REQUIRE(r.prefix.size() == 1);
    CHECK(r.prefix[0].content == pfx + "合");
    // Nothing after the head: folded too (never an empty stacked summary).
    h = {message::user(pfx + "旧")};
    windowed w3(h);
    r = sum.compress(w3.input());
    REQUIRE(r.prefix.size() == 1);
    CHECK(r.prefix[0].content == pfx + "再");
    // The window knows its stable head after applying a stacked result.
    windowed w4({message::user(pfx + "旧"), message::user("q"), message::assistant("a"), message::user("q3")});
    ania::compression_result stacked;
    stacked.ok = true;
    stacked.keep_from = 3;
    stacked.prefix = {message::user(pfx + "旧"), message::user(pfx + "x")};
    w4.w.apply(std::move(stacked));
    CHECK(w4.w.stable_prefix() == 2);
    w4.w.drop_front(1);
    CHECK(w4.w.stable_prefix() == 1);
}
