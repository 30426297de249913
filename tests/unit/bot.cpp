// tests/unit/bot.cpp -- basic_bot: the spec's chat plugin as one type, over a SCRIPTED model (no LLM here) and
// over the real openai::client against a loopback server; real SQLite files, real threads.
#include <catch2/catch.hpp>

#include <atomic>
#include <chrono>
#include <fstream>
#include <mutex>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include <ania/ania.hpp>
#include <ania/bot/default_bot.hpp>
#include <ania/json.hpp>
#include <ania/testing/scripted_client.hpp>

#include "scripted_server.hpp"
#include "temp_dir.hpp"

using ania::message;
using ania::role;
using ania::testing::scripted_client;
using namespace std::chrono_literals;

namespace {

/// The user's own words in a request's last user message (injections come before a blank line).
std::string said(const message& m) {
    const std::string t = m.text();
    const std::size_t at = t.rfind("\n\n");
    return at == std::string::npos ? t : t.substr(at + 2);
}

/// SCRIPTED rules, safe from any thread: "记住 X" saves X through memory_save, "查 X" searches for it, a tool
/// result is answered with its text, "几条" counts the user messages the model was sent; anything else is
/// acknowledged. Each request is counted by the model named in it (main or compression).
struct rules {
    std::shared_ptr<std::atomic<int>> ids = std::make_shared<std::atomic<int>>(0);

    ania::completion operator()(const ania::chat_request& req) const {
        const std::vector<message> msgs = req.messages.to_vector();
        const message& last = msgs.back();
        if (last.role == role::tool) return ania::completion::success(message::assistant("工具说：" + last.text()), {30, 5, 35, {}});
        const std::string s = said(last);
        const auto call = [&](const char* name, const std::string& args) {
            std::vector<ania::tool_call> cs{{"call_" + std::to_string(++*ids), "function", name, args, {}, {}}};
            return ania::completion::success(message::assistant_calls(std::move(cs)), {30, 5, 35, {}});
        };
        if (s.rfind("记住 ", 0) == 0) return call("memory_save", ania::json{{"content", s.substr(7)}}.dump());
        if (s.rfind("查 ", 0) == 0) return call("memory_search", ania::json{{"query", s.substr(4)}}.dump());
        if (s == "几条") {
            std::size_t users = 0;
            for (const message& m : msgs) users += m.role == role::user;
            return ania::completion::success(message::assistant(std::to_string(users)), {30, 5, 35, {}});
        }
        return ania::completion::success(message::assistant("收到：" + s), {30, 5, 35, {}});
    }
};

struct scripted_bot_traits : ania::bot_traits<scripted_client, ania::sqlite_store> {
    using clock = ania::manual_clock;
};
using scripted_bot = ania::basic_bot<scripted_bot_traits>;

struct capture {
    std::shared_ptr<std::mutex> mu = std::make_shared<std::mutex>();
    std::shared_ptr<std::vector<std::string>> lines = std::make_shared<std::vector<std::string>>();
    ania::log_sink sink() const {
        return [mu = mu, lines = lines](ania::log_level, std::string_view t) {
            std::lock_guard l(*mu);
            lines->emplace_back(t);
        };
    }
    std::size_t count(std::string_view needle) const {
        std::lock_guard l(*mu);
        std::size_t n = 0;
        for (const auto& s : *lines) n += s.find(needle) != std::string::npos;
        return n;
    }
};

ania::bot_options options_in(const ania_test::temp_dir& dir, const capture& log, bool janitor = false) {
    ania::bot_options o;
    o.system_prompt = "你是 Ania。";
    o.database = dir.file("bot.db");
    o.log = log.sink();
    if (!janitor) o.adjust_sessions = [](ania::session_options& s) { s.janitor = false; };
    return o;
}

scripted_client rule_model() {
    scripted_client m;
    m.otherwise(ania::testing::scripted_client::respond_fn(rules{}));
    return m;
}

} // namespace

TEST_CASE("bot: two groups and two private chats from 8 threads; memory bound to each session's scope", "[bot][threads]") {
    ania_test::temp_dir dir;
    capture log;
    scripted_bot bot(ania::parse_config("{}"), options_in(dir, log), {.client = rule_model()});
    const std::vector<std::string> sessions{"g:1", "g:2", "f:1", "f:2"};
    constexpr int rounds = 12;
    std::atomic<int> replied{0}, queued{0}, turns{0};
    std::vector<std::thread> ts;
    for (int t = 0; t < 8; ++t)
        ts.emplace_back([&, t] {
            const std::string& key = sessions[static_cast<std::size_t>(t) % sessions.size()];
            for (int i = 0; i < rounds; ++i) {
                const auto r = bot.respond(key, "记住 " + key + " 的秘密 " + std::to_string(t) + "-" + std::to_string(i));
                turns += static_cast<int>(r.turns.size());
                if (r.status == ania::respond_status::replied) ++replied;
                else if (r.status == ania::respond_status::queued) ++queued;
            }
        });
    for (auto& th : ts) th.join();
    CHECK(replied + queued == 8 * rounds);  // every message answered at once or queued behind a reply
    CHECK(turns >= replied);                // queued ones ran as (merged) turns of the owner
    CHECK(turns <= 8 * rounds);
    // Each save went through the tools bound to the session that asked: one scope each, nothing crossed.
    std::size_t total = 0;
    for (const std::string& key : sessions) {
        const auto scope = ania::memory::scope::from(key);
        const auto all = bot.memory().list(scope);
        total += all.size();
        for (const auto& e : all) CHECK(e.content.find(key + " 的秘密") != std::string::npos);
    }
    CHECK(total > 0);
    // Searched from another group or a private chat, through the bot's own tools: nothing of g:1's.
    for (const char* other : {"g:2", "f:1", "f:2"}) {
        const auto r = bot.respond(other, "查 g:1 的秘密");
        REQUIRE(r.status == ania::respond_status::replied);
        CHECK(r.reply().find("g:1 的秘密") == std::string::npos);
    }
    const auto mine = bot.respond("g:1", "查 g:1 的秘密");
    CHECK(mine.reply().find("g:1 的秘密") != std::string::npos);
    CHECK(bot.sessions().resident() == 4);
}

TEST_CASE("bot: the 30-message group auto-clear and idle eviction, through the bot", "[bot]") {
    ania_test::temp_dir dir;
    capture log;
    ania::manual_clock clock;
    scripted_bot bot(ania::parse_config(R"({"session":{"group_auto_clear":30,"max_idle_minutes":120}})"), options_in(dir, log),
                     {.client = rule_model(), .clock = clock});
    REQUIRE(bot.respond("g:7", "你好").status == ania::respond_status::replied);
    bot.writer().flush();
    CHECK(bot.store().load("g:7").size() == 2);
    for (int i = 1; i < 30; ++i) CHECK(bot.respond("g:7", "闲聊", false).status == ania::respond_status::ignored);
    CHECK(bot.respond("g:7", "闲聊", false).status == ania::respond_status::cleared);  // the 30th
    bot.writer().flush();
    CHECK(bot.store().load("g:7").empty());

    REQUIRE(bot.respond("g:8", "早").status == ania::respond_status::replied);
    REQUIRE(bot.sessions().contains("g:8"));
    clock.advance(119min);
    CHECK(bot.sessions().tick() == 0);
    clock.advance(2min);
    CHECK(bot.sessions().tick() >= 1);
    CHECK_FALSE(bot.sessions().contains("g:8"));
    // Rebuilt from the store on the next message: the model is sent the earlier turn again.
    const auto r = bot.respond("g:8", "几条");
    CHECK(r.reply() == "2");
}

TEST_CASE("bot: a restart replays history and memory; destruction flushes every acknowledged turn", "[bot][persist]") {
    ania_test::temp_dir dir;
    capture log;
    {
        scripted_bot bot(ania::parse_config("{}"), options_in(dir, log), {.client = rule_model()});
        REQUIRE(bot.respond("f:42", "记住 我喜欢美式咖啡").status == ania::respond_status::replied);
        for (int i = 0; i < 20; ++i) REQUIRE(bot.respond("f:42", "第 " + std::to_string(i) + " 句").status == ania::respond_status::replied);
    }  // no flush: the destructor must
    {
        ania::sqlite_store check(dir.file("bot.db"));
        CHECK(check.load("f:42").size() == 2 * 20 + 4);  // the save: user, call, result, reply; then 20 pairs
    }
    scripted_bot again(ania::parse_config("{}"), options_in(dir, log), {.client = rule_model()});
    CHECK(again.respond("f:42", "几条").reply() == "22");
    CHECK(again.respond("f:42", "查 咖啡").reply().find("美式咖啡") != std::string::npos);
}

TEST_CASE("bot: a session key that is not a memory scope gets no memory tools, said once, no exception", "[bot]") {
    ania_test::temp_dir dir;
    capture log;
    scripted_client model = rule_model();
    scripted_bot bot(ania::parse_config("{}"), options_in(dir, log), {.client = model});
    CHECK(bot.respond("telegram:abc", "你好").reply() == "收到：你好");
    CHECK(bot.respond("discord-9", "你好").reply() == "收到：你好");
    CHECK(log.count("is not a memory scope") == 1);
    const auto r = bot.respond("telegram:abc", "记住 x");  // the model calls a tool the session does not have
    REQUIRE(r.status == ania::respond_status::replied);
    CHECK(r.reply().find("工具说") != std::string::npos);
    CHECK(model.tools_offered().front() == 0);
    CHECK(bot.respond("g:5", "你好").status == ania::respond_status::replied);
    CHECK(model.tools_offered().back() == 4);  // memory_save, _search, _update, _forget
}

TEST_CASE("bot: memory.auto_inject reaches each session's own scope only; a config typo names the key", "[bot][config]") {
    ania_test::temp_dir dir;
    capture log;
    scripted_client model = rule_model();
    scripted_bot bot(ania::parse_config(R"({"memory":{"auto_inject":true}})"), options_in(dir, log), {.client = model});
    REQUIRE(bot.respond("g:1", "记住 咖啡要加冰").status == ania::respond_status::replied);
    REQUIRE(bot.respond("g:1", "咖啡怎么喝").status == ania::respond_status::replied);
    CHECK(model.requests().back().back().text().find("咖啡要加冰") != std::string::npos);
    REQUIRE(bot.respond("g:2", "咖啡怎么喝").status == ania::respond_status::replied);
    CHECK(model.requests().back().back().text().find("咖啡要加冰") == std::string::npos);
    // The stored copy holds no injection.
    bot.writer().flush();
    for (const message& m : bot.store().load("g:1")) CHECK(m.text().find("【相关记忆】") == std::string::npos);

    const std::string path = dir.file("typo.json");
    { std::ofstream(path) << R"({"sesion":{"max_sessions":3}})"; }
    try {
        (void)ania::load_config_file(path);
        FAIL("a typo was accepted");
    } catch (const ania::error& e) {
        CHECK(e.code() == ania::errc::invalid_config);
        CHECK(std::string(e.what()).find("sesion") != std::string::npos);
        CHECK(std::string(e.what()).find(path) != std::string::npos);
    }
    CHECK_THROWS_AS(ania::load_config_file(dir.file("missing.json")), ania::error);
}

TEST_CASE("bot: images become markers without a vision model, descriptions with one, parts when multimodal", "[bot][images]") {
    ania_test::temp_dir dir;
    capture log;
    const std::string png = "data:image/png;base64,iVBORw0KGgo=";
    {
        scripted_client model = rule_model();
        scripted_bot bot(ania::parse_config("{}"), options_in(dir, log), {.client = model});
        CHECK(bot.image_mode() == ania::bot_images<scripted_client>::mode::unreadable);
        REQUIRE(bot.respond("f:1", ania::user_input("看图", {png})).status == ania::respond_status::replied);
        const message& sent = model.requests().back().back();
        CHECK(sent.form != ania::content_form::parts);
        CHECK(sent.text().find("[图片 ") != std::string::npos);
    }
    {
        scripted_client model = rule_model(), vision;
        vision.otherwise("一只猫");
        scripted_bot bot(ania::parse_config("{}"), options_in(dir, log), {.client = model, .vision_client = vision});
        CHECK(bot.image_mode() == ania::bot_images<scripted_client>::mode::describe);
        REQUIRE(bot.respond("f:2", ania::user_input("看图", {png})).status == ania::respond_status::replied);
        CHECK(model.requests().back().back().text().find("一只猫") != std::string::npos);
        CHECK(vision.calls() == 1);
    }
    {
        scripted_client model = rule_model();
        scripted_bot bot(ania::parse_config(R"({"multimodal":true})"), options_in(dir, log), {.client = model});
        REQUIRE(bot.respond("f:3", ania::user_input("看图", {png})).status == ania::respond_status::replied);
        CHECK(model.requests().back().back().form == ania::content_form::parts);
    }
}

TEST_CASE("bot: ania::bot from the configuration alone, against a loopback server: llm, compressor and ocr models", "[bot][openai]") {
    ania_test::scripted_server s;
    std::mutex mu;
    std::vector<std::string> models;
    s.otherwise([&](const httplib::Request& req, httplib::Response& res) {
        const ania::json body = ania::json::parse(req.body);
        {
            std::lock_guard l(mu);
            models.push_back(body["model"].get<std::string>());
        }
        const std::string text = body["model"] == "cheap" ? "摘要：聊了天" : body["model"] == "eyes" ? "一只猫" : "好的";
        res.set_content(ania::json{{"choices", {{{"index", 0}, {"message", {{"role", "assistant"}, {"content", text}}}, {"finish_reason", "stop"}}}},
                                   {"usage", {{"prompt_tokens", 900}, {"completion_tokens", 2}, {"total_tokens", 902}}}}
                            .dump(),
                        "application/json");
    });
    ania_test::temp_dir dir;
    capture log;
    const ania::config cfg = ania::parse_config(R"({"max_context_tokens":1000,
        "llm":{"base_url":")" + s.url() + R"(","api_key":"sk-main","model":"big"},
        "compressor":{"model":"cheap"},
        "ocr":{"base_url":")" + s.url() + R"(","api_key":"sk-ocr","model":"eyes"}})");
    {
        ania::bot bot(cfg, options_in(dir, log, true));
        CHECK(bot.image_mode() == ania::bot_images<ania::openai::client>::mode::describe);
        CHECK(bot.respond("g:1", "你好").reply() == "好的");                 // 900 reported: over 800
        CHECK(bot.respond("g:1", ania::user_input("看图", {"data:image/png;base64,AAAA"})).reply() == "好的");
    }
    std::lock_guard l(mu);
    // big (turn 1), cheap (the summary before turn 2), eyes (the image), big (turn 2).
    CHECK(models == std::vector<std::string>{"big", "cheap", "eyes", "big"});
    ania::sqlite_store check(dir.file("bot.db"));
    const auto stored = check.load("g:1");
    REQUIRE_FALSE(stored.empty());
    CHECK(stored.front().text().find("聊了天") != std::string::npos);
}
