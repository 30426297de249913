// tests/support/bot_cases.hpp -- the cases every database of basic_bot passes, over a SCRIPTED model (no LLM
// here) and real threads. The including file defines ANIA_BOT_DATABASES, the fixture types the cases run over:
// each has `using bot = ...`, `static void place(bot_options&, dir)` and `static bot_options options(dir, log)`
// (bot.cpp: one SQLite file; bot_postgres.cpp: the throwaway cluster's database).
#pragma once
#include <catch2/catch.hpp>

#include <atomic>
#include <fstream>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "bot_rules.hpp"

using namespace ania_test::bot;

TEMPLATE_TEST_CASE("bot: two groups and two private chats from 8 threads; memory bound to each session's scope", "[bot][threads]", ANIA_BOT_DATABASES) {
    ania_test::temp_dir dir;
    capture log;
    typename TestType::bot bot(ania::parse_config("{}"), TestType::options(dir, log), {.client = rule_model()});
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

TEMPLATE_TEST_CASE("bot: the 30-message group auto-clear and idle eviction, through the bot", "[bot]", ANIA_BOT_DATABASES) {
    ania_test::temp_dir dir;
    capture log;
    ania::manual_clock clock;
    typename TestType::bot bot(ania::parse_config(R"({"session":{"group_auto_clear":30,"max_idle_minutes":120}})"), TestType::options(dir, log),
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

TEMPLATE_TEST_CASE("bot: history.archive.* archives what compactions remove; history_search per session; the auto-clear clears it", "[bot][archive]", ANIA_BOT_DATABASES) {
    ania_test::temp_dir dir;
    capture log;
    scripted_client model;
    // The rules, reporting no usage: the window runs on its estimate, so a small max_context_tokens compresses.
    model.otherwise(scripted_client::respond_fn([r = rules{}](const ania::chat_request& q) {
        ania::completion c = r(q);
        c.used = {};
        return c;
    }));
    const ania::config cfg = ania::parse_config(
        R"({"max_context_tokens": 800, "session": {"group_auto_clear": 5}, "history": {"archive": {"enabled": true}}})");
    typename TestType::bot bot(cfg, TestType::options(dir, log), {.client = model});
    REQUIRE(bot.archive() != nullptr);
    const std::string pad(300, '.');
    for (int i = 0; i < 12; ++i) {
        REQUIRE(bot.respond("g:1", "第 " + std::to_string(i) + " 句 zq" + std::to_string(i) + "x " + pad).status == ania::respond_status::replied);
        REQUIRE(bot.respond("g:2", "other " + std::to_string(i) + " yq" + std::to_string(i) + "x " + pad).status == ania::respond_status::replied);
    }
    bot.writer().flush();
    const ania::archive_slice a = bot.store().read_archive("g:1", 0, ania::whole_archive);
    REQUIRE(a.next_seq > 0);  // compactions ran and archived
    for (const message& m : bot.store().load("g:1")) CHECK(m.text().rfind("第 0 句", 0) == std::string::npos);  // it left the history
    // The model finds it again through the tool bound to its own session; g:2's words are not there.
    std::string r = bot.respond("g:1", "回忆 zq0x").reply();
    CHECK(r.find("第 0 句 zq0x") != std::string::npos);
    r = bot.respond("g:1", "回忆 yq0x").reply();
    CHECK(r.find("yq0x .") == std::string::npos);
    CHECK(bot.respond("g:2", "回忆 yq0x").reply().find("other 0 yq0x") != std::string::npos);
    // The group auto-clear forgets the archive too (history.archive.keep_on_clear is false).
    for (int i = 0; i < 5; ++i) bot.respond("g:1", "闲聊", false);
    bot.writer().flush();
    CHECK(bot.store().read_archive("g:1", 0, ania::whole_archive).messages.empty());
    CHECK(bot.respond("g:1", "回忆 zq0x").reply().find("第 0 句") == std::string::npos);
    CHECK_FALSE(bot.store().read_archive("g:2", 0, ania::whole_archive).messages.empty());
    // Off by default: no archive, no tools.
    typename TestType::bot plain(ania::parse_config("{}"), TestType::options(dir, log), {.client = rule_model()});
    CHECK(plain.archive() == nullptr);
}

TEMPLATE_TEST_CASE("bot: a restart replays history and memory; destruction flushes every acknowledged turn", "[bot][persist]", ANIA_BOT_DATABASES) {
    ania_test::temp_dir dir;
    capture log;
    {
        typename TestType::bot bot(ania::parse_config("{}"), TestType::options(dir, log), {.client = rule_model()});
        REQUIRE(bot.respond("f:42", "记住 我喜欢美式咖啡").status == ania::respond_status::replied);
        for (int i = 0; i < 20; ++i) REQUIRE(bot.respond("f:42", "第 " + std::to_string(i) + " 句").status == ania::respond_status::replied);
    }  // no flush: the destructor must
    typename TestType::bot again(ania::parse_config("{}"), TestType::options(dir, log), {.client = rule_model()});
    CHECK(again.store().load("f:42").size() == 2 * 20 + 4);  // the save: user, call, result, reply; then 20 pairs
    CHECK(again.respond("f:42", "几条").reply() == "22");
    CHECK(again.respond("f:42", "查 咖啡").reply().find("美式咖啡") != std::string::npos);
}

TEMPLATE_TEST_CASE("bot: a session key that is not a memory scope gets no memory tools, said once, no exception", "[bot]", ANIA_BOT_DATABASES) {
    ania_test::temp_dir dir;
    capture log;
    scripted_client model = rule_model();
    typename TestType::bot bot(ania::parse_config("{}"), TestType::options(dir, log), {.client = model});
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

TEMPLATE_TEST_CASE("bot: memory.auto_inject reaches each session's own scope only; a config typo names the key", "[bot][config]", ANIA_BOT_DATABASES) {
    ania_test::temp_dir dir;
    capture log;
    scripted_client model = rule_model();
    typename TestType::bot bot(ania::parse_config(R"({"memory":{"auto_inject":true}})"), TestType::options(dir, log), {.client = model});
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

TEMPLATE_TEST_CASE("bot: images become markers without a vision model, descriptions with one, parts when multimodal", "[bot][images]", ANIA_BOT_DATABASES) {
    ania_test::temp_dir dir;
    capture log;
    const std::string png = "data:image/png;base64,iVBORw0KGgo=";
    {
        scripted_client model = rule_model();
        typename TestType::bot bot(ania::parse_config("{}"), TestType::options(dir, log), {.client = model});
        CHECK(bot.image_mode() == ania::bot_images<scripted_client>::mode::unreadable);
        REQUIRE(bot.respond("f:1", ania::user_input("看图", {png})).status == ania::respond_status::replied);
        const message& sent = model.requests().back().back();
        CHECK(sent.form != ania::content_form::parts);
        CHECK(sent.text().find("[图片 ") != std::string::npos);
    }
    {
        scripted_client model = rule_model(), vision;
        vision.otherwise("一只猫");
        typename TestType::bot bot(ania::parse_config("{}"), TestType::options(dir, log), {.client = model, .vision_client = vision});
        CHECK(bot.image_mode() == ania::bot_images<scripted_client>::mode::describe);
        REQUIRE(bot.respond("f:2", ania::user_input("看图", {png})).status == ania::respond_status::replied);
        CHECK(model.requests().back().back().text().find("一只猫") != std::string::npos);
        CHECK(vision.calls() == 1);
    }
    {
        scripted_client model = rule_model();
        typename TestType::bot bot(ania::parse_config(R"({"multimodal":true})"), TestType::options(dir, log), {.client = model});
        REQUIRE(bot.respond("f:3", ania::user_input("看图", {png})).status == ania::respond_status::replied);
        CHECK(model.requests().back().back().form == ania::content_form::parts);
    }
}

