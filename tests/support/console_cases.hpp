// tests/support/console_cases.hpp -- the operator's console (ania-admin) of a bot, over a real HTTP server on
// 127.0.0.1, on every database the including file lists in ANIA_BOT_DATABASES (bot.cpp: SQLite;
// bot_postgres.cpp: the throwaway cluster). The model is SCRIPTED (bot_rules.hpp); the server, the client,
// the store and the threads are real.
#pragma once
#include <catch2/catch.hpp>

#include <atomic>
#include <string>
#include <thread>
#include <vector>

#include <httplib.h>

#include <ania/admin/console.hpp>

#include "bot_rules.hpp"

namespace ania_test::console {

inline constexpr const char* token = "t0ken-for-the-console-test";

inline std::string encode(std::string_view s) {
    static const char* hex = "0123456789ABCDEF";
    std::string out;
    for (const unsigned char c : s) {
        if (std::isalnum(c) || c == '-' || c == '_' || c == '.' || c == '~' || c == ':') {
            out += static_cast<char>(c);
        } else {
            out += '%';
            out += hex[c >> 4];
            out += hex[c & 15];
        }
    }
    return out;
}

/// An HTTP client of the console: `call("PUT", "/api/memory", {{"scope","g:1"},{"id",id}}, body)`.
struct operator_client {
    int port;
    std::string bearer = token;

    httplib::Result call(const std::string& method, const std::string& path, const std::vector<std::pair<std::string, std::string>>& query = {},
                         const std::string& body = "") const {
        httplib::Client cli("127.0.0.1", port);
        cli.set_read_timeout(std::chrono::seconds(30));
        httplib::Request req;
        req.method = method;
        req.path = path;
        for (std::size_t i = 0; i < query.size(); ++i)
            req.path += (i == 0 ? "?" : "&") + query[i].first + "=" + encode(query[i].second);
        if (!bearer.empty()) req.headers.emplace("Authorization", "Bearer " + bearer);
        if (!body.empty()) {
            req.headers.emplace("Content-Type", "application/json");
            req.body = body;
        }
        return cli.send(req);
    }
    ania::json json_of(const std::string& method, const std::string& path, const std::vector<std::pair<std::string, std::string>>& query = {},
                       const std::string& body = "", int expect = 200) const {
        const auto r = call(method, path, query, body);
        REQUIRE(r);
        INFO(method << " " << path << " -> " << r->status << " " << r->body);
        REQUIRE(r->status == expect);
        return ania::json::parse(r->body);
    }
};

/// A bot with its console on a free loopback port.
inline ania::config console_config(const std::string& extra = "") {
    return ania::parse_config(R"({"admin":{"enabled":true,"listen":"127.0.0.1:0","token":")" + std::string(token) + R"("})" + extra + "}");
}

/// The bad scopes of the memory tests, and a few an HTTP client can send: none may reach a store.
inline const std::vector<std::string>& bad_scopes() {
    static const std::vector<std::string> v{"",        "g:",       "g:12a",      "x:1",           "G:1",       "g:-1",
                                            "g:1 ",    " g:1",     "f:qq:1",     "g:1;DROP",      "g:../1",    "g:１",
                                            "g:x",     std::string("g:1\0", 4), "g:1\ng:2", "f:1' OR '1'='1"};
    return v;
}

} // namespace ania_test::console

TEMPLATE_TEST_CASE("console: every memory route over HTTP; provenance as the page shows it; bad scopes and tokens change nothing",
                   "[console][admin]", ANIA_BOT_DATABASES) {
    using namespace ania_test::console;
    ania_test::temp_dir dir;
    ania_test::bot::capture log;
    typename TestType::bot bot(console_config(), TestType::options(dir, log), {.client = ania_test::bot::rule_model()});
    REQUIRE(bot.admin_port() > 0);
    const operator_client op{bot.admin_port()};

    // The model saves a memory through its tool; the console lists it with who saved it and through which call.
    REQUIRE(bot.respond("g:1", "记住 小明喜欢拿铁").status == ania::respond_status::replied);
    auto scopes = op.json_of("GET", "/api/scopes");
    CHECK(scopes["scopes"] == ania::json::array({"g:1"}));
    auto listed = op.json_of("GET", "/api/memories", {{"scope", "g:1"}});
    REQUIRE(listed["memories"].size() == 1);
    const std::string id = listed["memories"][0]["id"];
    CHECK(listed["memories"][0]["content"] == "小明喜欢拿铁");

    // Create, search, edit, history, restore, delete.
    const auto created = op.json_of("POST", "/api/memories", {}, R"({"scope":"g:1","content":"小红喜欢绿茶","user_id":"qq:2","tags":["饮品"]})", 201);
    const std::string id2 = created["id"];
    CHECK(created["tags"] == ania::json::array({"饮品"}));
    CHECK(op.json_of("GET", "/api/memories", {{"scope", "g:1"}})["memories"].size() == 2);
    const auto found = op.json_of("GET", "/api/memories", {{"scope", "g:1"}, {"q", "绿茶"}});
    REQUIRE(found["memories"].size() >= 1);
    CHECK(found["memories"][0]["id"] == id2);
    CHECK(op.json_of("PUT", "/api/memory", {{"scope", "g:1"}, {"id", id}}, R"({"content":"小明喜欢美式"})")["content"] == "小明喜欢美式");
    const auto versions = op.json_of("GET", "/api/memory/history", {{"scope", "g:1"}, {"id", id}})["versions"];
    REQUIRE(versions.size() == 2);
    CHECK(versions[0]["kind"] == "saved");
    CHECK(versions[0]["actor"] == "model");
    CHECK(versions[0]["session"] == "g:1");
    CHECK(versions[0]["tool_call_id"].get<std::string>().rfind("call_", 0) == 0);
    CHECK(versions[1]["kind"] == "updated");
    CHECK(versions[1]["actor"] == "admin");
    CHECK(versions[1]["content"] == "小明喜欢美式");
    CHECK(op.json_of("POST", "/api/memory/restore", {{"scope", "g:1"}, {"id", id}}, R"({"seq":1})")["content"] == "小明喜欢拿铁");
    CHECK(bot.memory().get(ania::memory::scope::from("g:1"), id)->content == "小明喜欢拿铁");
    CHECK(op.json_of("DELETE", "/api/memory", {{"scope", "g:1"}, {"id", id2}})["deleted"] == id2);
    CHECK(op.json_of("GET", "/api/memories", {{"scope", "g:1"}})["memories"].size() == 1);
    // The page's first view in one request: the scopes, the first scope's memories (or the one asked for),
    // the resident sessions; the same as the routes of each.
    const auto overview = op.json_of("GET", "/api/overview");
    CHECK(overview["scopes"] == op.json_of("GET", "/api/scopes")["scopes"]);
    CHECK(overview["scope"] == "g:1");
    REQUIRE(overview["memories"].size() == 1);
    CHECK(overview["memories"] == op.json_of("GET", "/api/memories", {{"scope", "g:1"}})["memories"]);
    REQUIRE(overview["sessions"].size() == 1);  // as /api/sessions (idle_ms moves between two calls)
    CHECK(overview["sessions"][0]["key"] == "g:1");
    CHECK(overview["sessions"][0]["messages"] == op.json_of("GET", "/api/sessions")["sessions"][0]["messages"]);
    const auto other = op.json_of("GET", "/api/overview", {{"scope", "f:9"}});  // the scope asked for, not the first
    CHECK(other["scope"] == "f:9");
    CHECK(other["memories"].empty());
    CHECK(op.call("POST", "/api/overview")->status == 405);
    // Every change is logged with the operator's address.
    CHECK(log.count("admin: 127.0.0.1 updated g:1") == 1);
    CHECK(log.count("admin: 127.0.0.1 restored version 1 of g:1") == 1);
    CHECK(log.count("admin: 127.0.0.1 deleted g:1") == 1);

    // Not found, bad input: clear statuses.
    CHECK(op.call("PUT", "/api/memory", {{"scope", "g:1"}, {"id", "ffffffff"}}, R"({"content":"x"})")->status == 404);
    CHECK(op.call("POST", "/api/memory/restore", {{"scope", "g:1"}, {"id", id}}, R"({"seq":99})")->status == 404);
    CHECK(op.call("POST", "/api/memory/restore", {{"scope", "g:1"}, {"id", id}}, R"({"seq":"1"})")->status == 400);
    CHECK(op.call("POST", "/api/memories", {}, R"({"scope":"g:1","content":5})")->status == 400);
    CHECK(op.call("POST", "/api/memories", {}, R"({"scope":"g:1","content":"x","tags":"not an array"})")->status == 400);
    CHECK(op.call("POST", "/api/memories", {}, R"({"scope":"g:1",)")->status == 400);
    CHECK(op.call("POST", "/api/memories", {}, R"([1,2])")->status == 400);
    CHECK(op.call("GET", "/api/nothing")->status == 404);
    CHECK(op.call("DELETE", "/api/scopes")->status == 405);

    // Bad scopes: 400 on every memory route, nothing read or written.
    const auto before = bot.memory().list(ania::memory::scope::from("g:1"));
    for (const std::string& bad : bad_scopes()) {
        INFO("scope: " << bad);
        CHECK(op.call("GET", "/api/memories", {{"scope", bad}})->status == 400);
        if (!bad.empty()) CHECK(op.call("GET", "/api/overview", {{"scope", bad}})->status == 400);  // none: the first
        CHECK(op.call("PUT", "/api/memory", {{"scope", bad}, {"id", id}}, R"({"content":"pwned"})")->status == 400);
        CHECK(op.call("DELETE", "/api/memory", {{"scope", bad}, {"id", id}})->status == 400);
        CHECK(op.call("GET", "/api/memory/history", {{"scope", bad}, {"id", id}})->status == 400);
        CHECK(op.call("POST", "/api/memory/restore", {{"scope", bad}, {"id", id}}, R"({"seq":1})")->status == 400);
        CHECK(op.call("POST", "/api/memories", {}, ania::json{{"scope", bad}, {"content", "pwned"}}.dump())->status == 400);
        CHECK(op.call("GET", "/api/session/history", {{"session", bad}})->status == 400);
        CHECK(op.call("POST", "/api/session/clear", {{"session", bad}})->status == 400);
    }
    CHECK(bot.memory().list(ania::memory::scope::from("g:1")) == before);
    CHECK(bot.memory().scopes() == std::vector<std::string>{"g:1"});

    // No token, a wrong one, another scheme: 401 on every route and nothing changed.
    for (const std::string& wrong : {std::string(), std::string("wrong"), std::string(token) + "x", std::string(token).substr(1)}) {
        operator_client intruder{bot.admin_port(), wrong};
        CHECK(intruder.call("GET", "/api/scopes")->status == 401);
        CHECK(intruder.call("GET", "/api/memories", {{"scope", "g:1"}})->status == 401);
        CHECK(intruder.call("PUT", "/api/memory", {{"scope", "g:1"}, {"id", id}}, R"({"content":"pwned"})")->status == 401);
        CHECK(intruder.call("DELETE", "/api/memory", {{"scope", "g:1"}, {"id", id}})->status == 401);
        CHECK(intruder.call("POST", "/api/memories", {}, R"({"scope":"g:1","content":"pwned"})")->status == 401);
        CHECK(intruder.call("POST", "/api/memory/restore", {{"scope", "g:1"}, {"id", id}}, R"({"seq":1})")->status == 401);
        CHECK(intruder.call("POST", "/api/session/clear", {{"session", "g:1"}})->status == 401);
        CHECK(intruder.call("POST", "/api/session/evict", {{"session", "g:1"}})->status == 401);
    }
    {
        httplib::Client cli("127.0.0.1", bot.admin_port());
        CHECK(cli.Get("/api/scopes", {{"Authorization", std::string("Basic ") + token}})->status == 401);
    }
    CHECK(bot.memory().list(ania::memory::scope::from("g:1")) == before);
    CHECK(bot.sessions().contains("g:1"));
    CHECK(log.count("refused (no or wrong token)") >= 8);

    // An oversized body: 413, nothing saved.
    const std::string huge = ania::json{{"scope", "g:1"}, {"content", std::string(ania::defaults::admin_max_body + 10, 'x')}}.dump();
    const auto big = op.call("POST", "/api/memories", {}, huge);
    REQUIRE(big);
    CHECK(big->status == 413);
    CHECK(bot.memory().list(ania::memory::scope::from("g:1")) == before);

    // The page and the API carry the security headers; the page is served without the token (it holds no data).
    httplib::Client cli("127.0.0.1", bot.admin_port());
    const auto page = cli.Get("/");
    REQUIRE(page);
    CHECK(page->status == 200);
    // The policy allows exactly the page's one inline script and one style sheet, by their SHA-256 (an
    // injected one would not match), and nothing inline besides.
    const std::string csp = page->get_header_value("Content-Security-Policy");
    const auto inline_text = [&](std::string_view open, std::string_view close) {
        const std::size_t a = page->body.find(open);
        REQUIRE(a != std::string::npos);
        REQUIRE(page->body.find(open, a + 1) == std::string::npos);  // one of each
        const std::size_t b = page->body.find(close, a);
        REQUIRE(b != std::string::npos);
        return page->body.substr(a + open.size(), b - a - open.size());
    };
    const std::string script = inline_text("<script>", "</script>"), style = inline_text("<style>", "</style>");
    CHECK(script.find("textContent") != std::string::npos);
    CHECK(csp.find("script-src " + ania::admin::detail::csp_hash(script) + ";") != std::string::npos);
    CHECK(csp.find("style-src " + ania::admin::detail::csp_hash(style) + ";") != std::string::npos);
    CHECK(csp.find("default-src 'none'") != std::string::npos);
    CHECK(csp.find("unsafe-inline") == std::string::npos);
    CHECK(csp.find("'self'; style-src") == std::string::npos);  // no script from a URL either
    CHECK(page->get_header_value("X-Content-Type-Options") == "nosniff");
    CHECK(cli.Get("/console.js")->status == 404);  // inlined: nothing else to fetch
    const auto api = op.call("GET", "/api/scopes");
    CHECK(api->get_header_value("X-Content-Type-Options") == "nosniff");
    CHECK(api->get_header_value("Content-Type").rfind("application/json", 0) == 0);
    CHECK(api->get_header_value("Set-Cookie").empty());
}

TEMPLATE_TEST_CASE("console: sessions, their stored history, turns, evict and clear over HTTP", "[console][admin]", ANIA_BOT_DATABASES) {
    using namespace ania_test::console;
    ania_test::temp_dir dir;
    ania_test::bot::capture log;
    typename TestType::bot bot(console_config(), TestType::options(dir, log), {.client = ania_test::bot::rule_model()});
    const operator_client op{bot.admin_port()};
    for (int i = 0; i < 30; ++i) REQUIRE(bot.respond("g:7", "第 " + std::to_string(i) + " 句").status == ania::respond_status::replied);
    REQUIRE(bot.respond("f:8", "你好").status == ania::respond_status::replied);

    const auto sessions = op.json_of("GET", "/api/sessions")["sessions"];
    REQUIRE(sessions.size() == 2);
    for (const auto& s : sessions) {
        const std::size_t expected = s["key"] == "g:7" ? 60 : 2;
        CHECK(s["messages"] == expected);
        CHECK(s["pending"] == 0);
        CHECK(s["responding"] == false);
        CHECK(s["tokens"].get<std::int64_t>() > 0);
        CHECK(s["bytes"].get<std::size_t>() > 0);
        CHECK(s["since_compression_ms"].is_null());
    }
    // Paged stored history: 60 messages, pages of 25.
    const auto p1 = op.json_of("GET", "/api/session/history", {{"session", "g:7"}, {"offset", "0"}, {"limit", "25"}});
    CHECK(p1["total"] == 60);
    REQUIRE(p1["messages"].size() == 25);
    CHECK(p1["messages"][0]["content"] == "第 0 句");
    const auto p3 = op.json_of("GET", "/api/session/history", {{"session", "g:7"}, {"offset", "50"}, {"limit", "25"}});
    REQUIRE(p3["messages"].size() == 10);
    CHECK(p3["messages"][9]["content"] == "收到：第 29 句");
    CHECK(op.json_of("GET", "/api/session/history", {{"session", "g:7"}, {"offset", "999"}})["messages"].empty());
    CHECK(op.call("GET", "/api/session/history", {{"session", "g:7"}, {"offset", "-1"}})->status == 400);
    // The chart's data: one point per turn, with the context size the model reported.
    const auto turns = op.json_of("GET", "/api/session/turns", {{"session", "g:7"}})["turns"];
    REQUIRE(turns.size() == 30);
    CHECK(turns[0]["context_tokens"] == 30);
    CHECK(turns[0]["ok"] == true);
    // The archive (nothing compacted yet).
    const auto archive = op.json_of("GET", "/api/session/archive", {{"session", "g:7"}});
    CHECK(archive["messages"].empty());
    CHECK(archive["next_seq"] == 0);
    // A seq past INT64_MAX is refused, not read as a negative one (which would mean "from the start").
    CHECK(op.call("GET", "/api/session/archive", {{"session", "g:7"}, {"from", "9223372036854775808"}})->status == 400);
    CHECK(op.json_of("GET", "/api/session/archive", {{"session", "g:7"}, {"from", "9223372036854775807"}})["messages"].empty());

    // Evict: gone from memory, kept in the store; it comes back on its next message.
    CHECK(op.json_of("POST", "/api/session/evict", {{"session", "f:8"}})["evicted"] == true);
    CHECK_FALSE(bot.sessions().contains("f:8"));
    CHECK(op.json_of("POST", "/api/session/evict", {{"session", "f:8"}})["evicted"] == false);  // not resident
    CHECK(op.json_of("GET", "/api/session/history", {{"session", "f:8"}})["total"] == 2);
    CHECK(bot.respond("f:8", "几条").reply() == "2");  // its history came back from the store
    // Clear: the conversation is forgotten, in memory and in the store.
    CHECK(op.json_of("POST", "/api/session/clear", {{"session", "g:7"}})["cleared"] == "g:7");
    CHECK(op.json_of("GET", "/api/session/history", {{"session", "g:7"}})["total"] == 0);
    CHECK(bot.respond("g:7", "几条").reply() == "1");
    CHECK(op.json_of("GET", "/api/session/turns", {{"session", "g:7"}})["turns"].size() == 1);  // the chart starts over
    // So does every other clear: the group auto-clear, bot.clear, the session cache's own.
    for (std::int64_t i = 0; i < bot.configuration().session.group_auto_clear; ++i) (void)bot.respond("g:7", "闲聊", false);
    CHECK(op.json_of("GET", "/api/session/history", {{"session", "g:7"}})["total"] == 0);
    CHECK(op.json_of("GET", "/api/session/turns", {{"session", "g:7"}})["turns"].empty());
    REQUIRE(bot.respond("g:7", "几条").reply() == "1");
    bot.clear("g:7");
    CHECK(op.json_of("GET", "/api/session/turns", {{"session", "g:7"}})["turns"].empty());
    REQUIRE(bot.respond("f:8", "几条").reply() == "3");
    bot.sessions().clear("f:8");
    CHECK(op.json_of("GET", "/api/session/turns", {{"session", "f:8"}})["turns"].empty());
    CHECK(log.count("admin: 127.0.0.1 cleared g:7") == 1);
    CHECK(log.count("admin: 127.0.0.1 evicted f:8") == 1);
}

TEMPLATE_TEST_CASE("console: concurrent edits of one entry from 8 operators: last write wins, every write kept as a version",
                   "[console][admin][threads]", ANIA_BOT_DATABASES) {
    using namespace ania_test::console;
    ania_test::temp_dir dir;
    ania_test::bot::capture log;
    typename TestType::bot bot(console_config(R"(,"memory":{"versions_kept":100})"), TestType::options(dir, log),
                               {.client = ania_test::bot::rule_model()});
    const operator_client op{bot.admin_port()};
    const std::string id = op.json_of("POST", "/api/memories", {}, R"({"scope":"g:3","content":"起点"})", 201)["id"];
    constexpr int writers = 8, each = 8;
    std::atomic<int> ok{0};
    std::vector<std::thread> ts;
    for (int t = 0; t < writers; ++t)
        ts.emplace_back([&, t] {
            for (int i = 0; i < each; ++i) {
                const auto r = op.call("PUT", "/api/memory", {{"scope", "g:3"}, {"id", id}},
                                       ania::json{{"content", "写者 " + std::to_string(t) + " 第 " + std::to_string(i) + " 次"}}.dump());
                if (r && r->status == 200) ++ok;
            }
        });
    for (auto& th : ts) th.join();
    CHECK(ok == writers * each);
    const auto versions = op.json_of("GET", "/api/memory/history", {{"scope", "g:3"}, {"id", id}})["versions"];
    REQUIRE(versions.size() == 1 + writers * each);  // the save and every edit
    std::set<std::string> written;
    for (std::size_t i = 1; i < versions.size(); ++i) {
        CHECK(versions[i]["seq"] == i + 1);
        written.insert(versions[i]["content"].get<std::string>());
    }
    CHECK(written.size() == static_cast<std::size_t>(writers * each));  // none lost
    // What stands is the last version recorded.
    CHECK(bot.memory().get(ania::memory::scope::from("g:3"), id)->content == versions.back()["content"]);
}
