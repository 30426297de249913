// tests/unit/wire_cache.cpp -- the request body in O(turn) (#30): a window's cached message bytes
// (wire_cache) and openai::request_wire give exactly request_body's bytes, whatever the window did between
// two requests; each message is written once; what it costs in memory.
#include <catch2/catch.hpp>

#include <cstdint>
#include <stdexcept>
#include <random>
#include <string>
#include <vector>

#include <ania/anthropic/wire.hpp>
#include <ania/context/token_window.hpp>
#include <ania/json.hpp>
#include <ania/openai/wire.hpp>
#include <ania/tool.hpp>
#include <ania/wire_cache.hpp>

#include "bench_data.hpp"
#include "random_messages.hpp"

using ania::message;
using namespace std::string_literals;

namespace {

/// Every shape a history holds, invalid UTF-8 and provider members included (those take dump's path).
message random_message(std::mt19937& rng) { return ania_test::random_message(rng, true); }
std::string random_text(std::mt19937& rng) { return ania_test::random_text(rng, true); }

/// What a window does between two requests: the turn committed, or one of its changes (a cut, an edit in
/// place, a compaction with a new head, a load, a clear).
void change(ania::token_window<>& w, std::vector<message>& turn, std::mt19937& rng, const std::string& edited) {
    std::uniform_int_distribution<int> op(0, 9), small(0, 4);
    const int what = op(rng);
    if (what <= 4) {
        w.append(std::move(turn));
    } else if (what == 5 && w.size() > 0) {
        w.drop_front(static_cast<std::size_t>(small(rng)) % (w.size() + 1));
    } else if (what == 6 && w.size() > 2) {  // a ladder's rung: a message edited in place
        ania::compression_result r;
        r.ok = true;
        r.edits.push_back({w.size() / 2, std::nullopt, ania::shared_text(edited)});
        w.apply(std::move(r));
    } else if (what == 7 && w.size() > 1) {  // a summary's compaction: a new head, part of the rest kept
        ania::compression_result r;
        r.ok = true;
        r.keep_from = w.size() / 2;
        r.prefix = {message::system("[summary] " + random_text(rng)), message::user(random_text(rng)), message::assistant("ok")};
        w.apply(std::move(r));
    } else if (what == 8) {
        std::vector<message> loaded;
        for (int i = small(rng); i >= 0; --i) loaded.push_back(random_message(rng));
        w.assign(std::move(loaded));
    } else {
        w.clear();
    }
}

/// The ORACLE: the Messages body as request_body wrote it before #30, through one nlohmann document (kept
/// here to check the text assembly that replaced it, byte for byte).
std::string dom_request_body(const ania::chat_request& request, const ania::anthropic::body_options& opt) {
    using ania::json;
    using ania::message;
    using ania::role;
    namespace detail = ania::anthropic::detail;
    json body = json::object();
    body["model"] = opt.model;
    body["max_tokens"] = opt.max_tokens;
    std::string system;
    json messages = json::array();
    const auto segs = request.messages.segments();
    for (std::size_t s = 0; s < segs.size(); ++s) {
        for (std::size_t i = 0; i < segs[s].size(); ++i) {
            const message& m = segs[s][i];
            if (m.role == role::system || m.role == role::developer) {
                if (!system.empty()) system += "\n\n";
                system += m.text();
                continue;
            }
            const char* r = detail::wire_role(m.role);
            if (messages.empty() || messages.back()["role"] != r) messages.push_back({{"role", r}, {"content", json::array()}});
            detail::blocks_of(m, messages.back()["content"]);
            // The end of the history's stable head (its summaries): a breakpoint that still hits after the
            // tail changed (a compaction that kept the head). The history's last block gets one below.
            if (s == 1 && opt.cache_prompt && i + 1 == request.stable_prefix && i + 1 < segs[s].size() && !messages.empty() &&
                !messages.back()["content"].empty())
                messages.back()["content"].back()["cache_control"] = {{"type", "ephemeral"}};
        }
        if (s == 1 && opt.cache_prompt && !messages.empty() && !messages.back()["content"].empty())
            messages.back()["content"].back()["cache_control"] = {{"type", "ephemeral"}};
    }
    // A message left without a block (an empty text) is not accepted: give it an empty text block.
    for (json& m : messages)
        if (m["content"].empty()) m["content"].push_back(detail::text_block(" "));
    if (!system.empty()) {
        if (opt.cache_prompt) body["system"] = json::array({{{"type", "text"}, {"text", system}, {"cache_control", {{"type", "ephemeral"}}}}});
        else body["system"] = system;
    }
    body["messages"] = std::move(messages);
    if (!request.tools.empty()) body["tools"] = detail::tools_json(request.tools);
    if (opt.stream) body["stream"] = true;
    if (opt.extra.is_object())
        for (auto it = opt.extra.begin(); it != opt.extra.end(); ++it)
            if (it.key() != "model" && it.key() != "messages" && it.key() != "system" && it.key() != "stream" && it.key() != "tools")
                body[it.key()] = it.value();
    return body.dump(-1, ' ', false, json::error_handler_t::replace);
}


/// Every write option and body switch the OpenAI protocol has.
std::vector<ania::openai::body_options> every_body_option() {
    using tcc = ania::write_options::tool_call_content;
    std::vector<ania::openai::body_options> all;
    for (const bool reasoning : {true, false})
        for (const tcc c : {tcc::keep, tcc::null, tcc::empty_string, tcc::omit})
            for (const bool stream : {false, true}) {
                ania::openai::body_options o;
                o.model = stream ? "deepseek-chat" : "m\xff";  // an invalid model name is repaired
                o.stream = stream;
                o.messages.include_reasoning = reasoning;
                o.messages.empty_tool_call_content = c;
                if (!reasoning) o.extra = ania::json{{"temperature", 0.3}, {"stream", false}};
                all.push_back(o);
            }
    return all;
}

/// The body the agent sends (the window's cache) against the body written whole, for one request.
void check_same_body(ania::token_window<>& w, const std::vector<message>& system, const std::vector<message>& turn,
                     std::span<const ania::tool> tools, const ania::openai::body_options& o) {
    ania::chat_request cached{{system, w.messages(), turn}, tools, {}, 0, w.wire()};
    REQUIRE(cached.history_wire != nullptr);
    const ania::chat_request whole{{system, w.messages(), turn}, tools};
    const ania::wire_body body = ania::openai::request_wire(cached, o);
    const std::string expected = ania::openai::request_body(whole, o);
    REQUIRE(body.flatten() == expected);
    CHECK(body.size() == expected.size());
    CHECK(w.wire_bytes().first() + w.wire_bytes().size() == w.size());  // every message is cached now
}

} // namespace

TEST_CASE("request_wire: the window's cached bytes make request_body's body after every change of the window") {
    std::mt19937 rng(20261206);
    const ania::tool tools[] = {ania::tool{"memory_save", "保存", ania::members_from(ania::parse_json(R"({"type":"object"})")), {}},
                                ania::tool{"t\xff", "bad \xfe text", {}, {}}};
    std::uniform_int_distribution<int> small(0, 4);
    for (const ania::openai::body_options& o : every_body_option()) {
        ania::token_window<> w;
        const std::vector<message> system = {message::system("你是群聊机器人")};
        for (int step = 0; step < 60; ++step) {
            std::vector<message> turn;
            for (int i = small(rng); i >= 0; --i) turn.push_back(random_message(rng));
            const std::span<const ania::tool> ts = step % 3 == 0 ? std::span<const ania::tool>() : std::span<const ania::tool>(tools);
            check_same_body(w, step % 4 == 0 ? std::vector<message>{} : system, step % 5 == 0 ? std::vector<message>{} : turn, ts, o);
            change(w, turn, rng, "[cleared]");
        }
    }
}

TEST_CASE("request_wire: another write option on the same window starts the cache over") {
    ania::token_window<> w;
    message reasoned = message::assistant("answer");
    reasoned.reasoning_content = "thought";
    w.append(std::vector<message>{message::user("q"), reasoned});
    const std::vector<message> turn = {message::user("next")};
    for (const bool reasoning : {true, false, true}) {
        ania::openai::body_options o;
        o.model = "m";
        o.messages.include_reasoning = reasoning;
        check_same_body(w, {}, turn, {}, o);
        const std::string body = ania::openai::request_wire({{{}, w.messages(), turn}, {}, {}, 0, w.wire()}, o).flatten();
        CHECK((body.find("thought") != std::string::npos) == reasoning);
    }
}

TEST_CASE("wire_cache: each committed message is written once over many turns; edits rewrite what they change") {
    ania::token_window<> w;
    std::size_t writes = 0;
    const auto write = [&writes](std::string& out, const message& m) {
        ++writes;
        ania::append_json(out, m);
    };
    std::size_t head = 0;
    for (int turn = 0; turn < 200; ++turn) {
        w.append(std::vector<message>{message::user("q" + std::to_string(turn)), message::assistant("a")});
        (void)w.wire()->sync(1, w.messages(), write, head);
    }
    CHECK(writes == 400);
    CHECK(head == 0);
    w.drop_front(150);  // a sliding window: nothing is written again
    (void)w.wire()->sync(1, w.messages(), write, head);
    CHECK(writes == 400);
    ania::compression_result r;
    r.ok = true;
    r.edits.push_back({240, std::nullopt, ania::shared_text("[cleared]")});
    w.apply(std::move(r));
    const std::string_view after_edit = w.wire()->sync(1, w.messages(), write, head);
    CHECK(writes == 400 + (250 - 240));  // the edited message and the ones after it
    CHECK(after_edit.find("[cleared]") != std::string_view::npos);
    ania::compression_result c;  // a compaction: the summaries are not cached, the kept messages stay cached
    c.ok = true;
    c.keep_from = 100;
    c.prefix = {message::system("[summary]")};
    w.apply(std::move(c));
    const std::string_view kept = w.wire()->sync(1, w.messages(), write, head);
    CHECK(writes == 410);
    CHECK(head == 1);
    CHECK(kept.starts_with(R"({"role":"user","content":"q125"},)"));
    (void)w.wire()->sync(2, w.messages(), write, head);  // another format: all of it, once
    CHECK(writes == 410 + w.size());
    CHECK(head == 0);
}

TEST_CASE("wire_cache: what it costs beside the messages, on the data set's history") {
    ania::token_window<> w;
    std::vector<message> history;
    for (const std::string& line : ania_test::load_lines("history_1k")) history.push_back(ania::parse_message(line));
    w.append(std::move(history));
    const std::vector<message> turn = {message::user("今天的会议几点开始？")};
    const ania::wire_body body = ania::openai::request_wire({{{}, w.messages(), turn}, {}, {}, 0, w.wire()}, {});
    // The cache holds the history's JSON (its text and ~30 bytes of keys per message) and one offset per
    // message: at most 1.3x what the messages themselves hold in memory.
    const double ratio = static_cast<double>(w.wire_bytes().memory_bytes()) / static_cast<double>(w.message_bytes());
    INFO("wire cache " << w.wire_bytes().memory_bytes() << " bytes for messages of " << w.message_bytes() << " bytes");
    CHECK(ratio <= 1.3);
    CHECK(w.resident_bytes() == w.message_bytes() + w.wire_bytes().memory_bytes());  // a session cache counts both
    ania::token_window<> cleared = w;
    cleared.clear();
    CHECK(cleared.resident_bytes() == 0);
    CHECK(body.shared.size() + 2 > w.wire_bytes().memory_bytes() / 2);  // the history really is the shared piece
    ania::window_options off;
    off.wire_cache = false;
    ania::token_window<> plain(off);
    CHECK(plain.wire() == nullptr);
    const ania::wire_body whole = ania::openai::request_wire({{{}, plain.messages(), turn}, {}, {}, 0, plain.wire()}, {});
    CHECK(whole.shared.empty());
    CHECK(whole.tail.empty());
}

TEST_CASE("anthropic: request_body and request_wire (the cached blocks) write the document's bytes, groups and breakpoints included") {
    std::mt19937 rng(4242);
    const ania::tool tools[] = {ania::tool{"memory_save", "保存", ania::members_from(ania::parse_json(R"({"type":"object"})")), {}}};
    std::uniform_int_distribution<int> small(0, 4);
    std::size_t marked = 0, grouped = 0;
    for (const bool cache_prompt : {true, false})
        for (const bool stream : {false, true}) {
            ania::anthropic::body_options o;
            o.model = stream ? "claude" : "c\xff";
            o.stream = stream;
            o.cache_prompt = cache_prompt;
            if (!stream) o.extra = ania::json{{"temperature", 0.2}, {"max_tokens", 99}, {"messages", 1}};
            ania::token_window<> w;
            for (int step = 0; step < 120; ++step) {
                std::vector<message> turn;
                for (int i = small(rng); i > 0; --i) turn.push_back(random_message(rng));
                const std::vector<message> system = step % 3 ? std::vector<message>{message::system("你是 Ania")} : std::vector<message>{};
                const std::size_t stable = step % 4 == 0 ? w.stable_prefix() : static_cast<std::size_t>(small(rng));
                const std::span<const ania::tool> ts = step % 2 ? std::span<const ania::tool>(tools) : std::span<const ania::tool>();
                const ania::chat_request whole{{system, w.messages(), turn}, ts, {}, stable};
                const ania::chat_request cached{{system, w.messages(), turn}, ts, {}, stable, w.wire()};
                const std::string expected = dom_request_body(whole, o);
                REQUIRE(ania::anthropic::request_body(whole, o) == expected);
                const ania::wire_body first = ania::anthropic::request_wire(cached, o);
                REQUIRE(first.flatten() == expected);
                REQUIRE_FALSE(first.tail.empty());  // assembled (a body written whole is all head)
                REQUIRE(w.wire_bytes().first() + w.wire_bytes().size() == w.size());
                REQUIRE(ania::anthropic::request_wire(cached, o).flatten() == expected);  // from the cache only
                std::size_t at = 0;
                while ((at = expected.find("cache_control", at + 1)) != std::string::npos) ++marked;
                grouped += expected.find(R"(}]},{"role":"user")") != std::string::npos;
                change(w, turn, rng, "");  // an emptied message: a group without a block
            }
        }
    CHECK(marked > 100);  // the breakpoints were exercised
    CHECK(grouped > 10);
}

TEST_CASE("wire_cache: a write that throws leaves the cache as it was before it") {
    ania::token_window<> w;
    w.append(std::vector<message>{message::user("one"), message::assistant("two"), message::user("three")});
    std::size_t head = 0;
    int calls = 0;
    const auto write = [&](std::string& out, const message& m) {
        out += "partial";
        if (++calls == 2) throw std::runtime_error("write failed");
        ania::append_json(out, m);
    };
    CHECK_THROWS(w.wire()->sync(1, w.messages(), write, head));
    CHECK(w.wire_bytes().size() == 1);  // the first message, complete
    const std::string_view again = w.wire()->sync(1, w.messages(), [](std::string& out, const message& m) { ania::append_json(out, m); }, head);
    CHECK(std::string(again) == "partial" + ania::dump(w[0]) + "," + ania::dump(w[1]) + "," + ania::dump(w[2]) + ",");
}

TEST_CASE("wire_cache: a run is written once per message while the history grows; any other change writes it again") {
    ania::token_window<> w;
    std::size_t writes = 0;
    const auto write = [&writes](std::string& out, std::size_t i, const message& m, ania::wire_cache::run_state& st) {
        ++writes;
        out += std::to_string(i) + ":" + std::string(m.text()) + ";";
        st.flags += 1;
        st.side += "+";
    };
    ania::wire_cache::run_state start;
    start.side = "s";
    const ania::wire_cache::run_state* end = nullptr;
    std::string_view run;
    for (int turn = 0; turn < 100; ++turn) {
        w.append(std::vector<message>{message::user("q"), message::assistant("a")});
        run = w.wire()->sync_run(7, "[P]", start, w.messages(), write, end);
    }
    CHECK(writes == 200);  // each message once, however many requests
    CHECK(run.starts_with("[P]0:q;1:a;2:q;"));
    CHECK(run.ends_with("199:a;"));
    CHECK(end->flags == 200);
    CHECK(end->side == "s" + std::string(200, '+'));
    CHECK(w.wire_bytes().first() + w.wire_bytes().size() == w.size());
    (void)w.wire()->sync_run(7, "[P]", start, w.messages(), write, end);
    CHECK(writes == 200);  // the same request again: nothing written

    const auto again = [&](std::uint64_t key, std::string_view prologue, const ania::wire_cache::run_state& s) {
        const std::size_t before = writes;
        run = w.wire()->sync_run(key, prologue, s, w.messages(), write, end);
        return writes - before;
    };
    CHECK(again(8, "[P]", start) == w.size());       // another key
    CHECK(again(8, "[Q]", start) == w.size());       // another prologue
    ania::wire_cache::run_state other = start;
    other.flags = 5;
    CHECK(again(8, "[Q]", other) == w.size());       // another start
    CHECK(end->flags == 5 + w.size());
    CHECK(again(8, "[Q]", other) == 0);
    w.drop_front(10);                                // a drop from the front: from the first message again
    CHECK(again(8, "[Q]", other) == w.size());
    CHECK(run.starts_with("[Q]0:q;"));
    ania::compression_result r;
    r.ok = true;
    r.edits.push_back({w.size() - 1, std::nullopt, ania::shared_text("[cleared]")});
    w.apply(std::move(r));                           // an edit in place
    CHECK(again(8, "[Q]", other) == w.size());
    CHECK(run.ends_with(":[cleared];"));
    ania::compression_result c;
    c.ok = true;
    c.keep_from = 50;
    c.prefix = {message::system("[summary]")};
    w.apply(std::move(c));                           // a compaction
    CHECK(again(8, "[Q]", other) == w.size());
    CHECK(run.starts_with("[Q]0:[summary];"));
    const auto throwing = [](std::string& out, std::size_t, const message&, ania::wire_cache::run_state&) {
        out += "partial";
        throw std::runtime_error("write failed");
    };
    w.append(std::vector<message>{message::user("x")});
    CHECK_THROWS(w.wire()->sync_run(8, "[Q]", other, w.messages(), throwing, end));
    CHECK(w.wire_bytes().size() == 0);               // a write that threw leaves nothing behind
    CHECK(again(8, "[Q]", other) == w.size());
    CHECK(run.find("partial") == std::string_view::npos);
    w.clear();
    CHECK(w.wire_bytes().memory_bytes() == 0);
}

TEST_CASE("anthropic: a turn's request writes the turn; the history is one shared view of the window's run") {
    std::vector<message> history;
    for (const std::string& line : ania_test::load_lines("history_1k")) history.push_back(ania::parse_message(line));
    ania::token_window<> w;
    const std::vector<message> system = {message::system("你是 Ania")};
    ania::anthropic::body_options o;
    o.model = "claude";
    o.cache_prompt = true;
    std::size_t stable = 0;
    const auto check = [&](const std::vector<message>& turn) {
        const ania::chat_request cached{{system, w.messages(), turn}, {}, {}, stable, w.wire()};
        const ania::chat_request whole{{system, w.messages(), turn}, {}, {}, stable};
        const ania::wire_body body = ania::anthropic::request_wire(cached, o);
        REQUIRE(body.flatten() == ania::anthropic::request_body(whole, o));
        return body;
    };
    // The data set's history, a few messages a turn, a stable head of 3 (a compaction's summaries). `lifted`:
    // the base prompt and the history's system messages, whose text the frame's `system` carries.
    std::vector<message> lifted = system;
    for (std::size_t at = 0; at < history.size(); at += 7) {
        const std::vector<message> turn(history.begin() + static_cast<std::ptrdiff_t>(at),
                                        history.begin() + static_cast<std::ptrdiff_t>(std::min(at + 7, history.size())));
        stable = w.size() >= 3 ? 3 : 0;
        const ania::wire_body body = check(turn);
        // Everything before this turn is the shared view (the run's bytes themselves, less the last block's
        // closing brace, which the breakpoint follows): what the request writes is the body without the history's
        // messages (its frame with `system`, the base prompt, the turn) and the seams (the breakpoint, a group
        // closed and one opened).
        const std::size_t without_history = ania::anthropic::request_body({{lifted, {}, turn}, {}, {}, 0}, o).size();
        CHECK(body.head.size() + body.tail.size() <= without_history + 128);
        w.append(turn);
        for (const message& m : turn)
            if (m.role == ania::role::system || m.role == ania::role::developer) lifted.push_back(m);
    }
    // Memory: the run is the history's blocks with their groups, about what the fragments cost.
    const double ratio = static_cast<double>(w.wire_bytes().memory_bytes()) / static_cast<double>(w.message_bytes());
    INFO("run " << w.wire_bytes().memory_bytes() << " bytes for messages of " << w.message_bytes() << " bytes");
    CHECK(ratio <= 1.3);
    // A change of the stable head or of the switch writes the run again, and stays right.
    stable = 5;
    (void)check({message::user("next")});
    o.cache_prompt = false;
    (void)check({message::user("next")});
}

TEST_CASE("anthropic: a breakpoint on the base prompt's last block, from inside the history, over many turns") {
    // The base prompt ends with a block of its own group; the history's first message joins that group with
    // no block, so the stable head's breakpoint (after it) lands on the base prompt's block, in the run's prologue.
    const std::vector<message> base = {message::system("s"), message::user("few-shot q")};
    ania::token_window<> w;
    w.append(std::vector<message>{message::user("")});
    ania::anthropic::body_options o;
    o.model = "claude";
    o.cache_prompt = true;
    for (int turn = 0; turn < 6; ++turn) {
        const std::vector<message> now = {message::user("q" + std::to_string(turn))};
        const ania::chat_request cached{{base, w.messages(), now}, {}, {}, 1, w.wire()};
        const ania::chat_request whole{{base, w.messages(), now}, {}, {}, 1};
        const std::string expected = ania::anthropic::request_body(whole, o);
        REQUIRE(ania::anthropic::request_wire(cached, o).flatten() == expected);
        REQUIRE(ania::anthropic::request_wire(cached, o).flatten() == expected);
        if (w.size() > 1) CHECK(expected.find(R"("few-shot q","cache_control")") != std::string::npos);
        w.append(std::vector<message>{message::assistant("a" + std::to_string(turn)), message::user("u")});
    }
}
