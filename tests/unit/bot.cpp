// tests/unit/bot.cpp -- basic_bot over one SQLite file (the shared cases of tests/support/bot_cases.hpp), and
// ania::bot over the real openai::client against a loopback server. Real files, real threads.
#include <catch2/catch.hpp>

#include <ania/bot/default_bot.hpp>

#include "bot_rules.hpp"
#include "temp_dir.hpp"

namespace {
struct sqlite_db {
    using bot = ania::basic_bot<ania_test::bot::scripted_bot_traits<ania::sqlite_store>>;
    static void place(ania::bot_options& o, const ania_test::temp_dir& dir) { o.database = dir.file("bot.db"); }
    static ania::bot_options options(const ania_test::temp_dir& dir, const ania_test::bot::capture& log) {
        return ania_test::bot::bot_options_in<sqlite_db>(dir, log);
    }
};
} // namespace
#define ANIA_BOT_DATABASES sqlite_db
#include "bot_cases.hpp"
#include "console_cases.hpp"
#include "scripted_server.hpp"

using ania::message;
using ania::role;

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
    ania_test::bot::capture log;
    const ania::config cfg = ania::parse_config(R"({"max_context_tokens":1000,
        "llm":{"base_url":")" + s.url() + R"(","api_key":"sk-main","model":"big"},
        "compressor":{"model":"cheap"},
        "ocr":{"base_url":")" + s.url() + R"(","api_key":"sk-ocr","model":"eyes"}})");
    {
        ania::bot_options o = sqlite_db::options(dir, log);
        o.adjust_sessions = {};  // the janitor thread runs, as in a program
        ania::bot bot(cfg, std::move(o));
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

#include <ania/bot/anthropic.hpp>

TEST_CASE("bot: an Anthropic bot from the configuration alone, against a loopback Messages server", "[bot][anthropic]") {
    ania_test::scripted_server s;
    std::mutex mu;
    std::vector<std::string> models, paths, keys;
    s.otherwise([&](const httplib::Request& req, httplib::Response& res) {
        const ania::json body = ania::json::parse(req.body);
        {
            std::lock_guard l(mu);
            models.push_back(body["model"].get<std::string>());
            paths.push_back(req.path);
            keys.push_back(req.get_header_value("x-api-key"));
        }
        const std::string text = body["model"] == "claude-small" ? "摘要：聊了天" : "好的";
        res.set_content(ania::json{{"id", "msg_1"}, {"type", "message"}, {"role", "assistant"},
                                   {"content", {{{"type", "text"}, {"text", text}}}}, {"stop_reason", "end_turn"},
                                   {"usage", {{"input_tokens", 900}, {"output_tokens", 2}}}}
                            .dump(),
                        "application/json");
    });
    ania_test::temp_dir dir;
    ania_test::bot::capture log;
    const ania::config cfg = ania::parse_config(R"({"max_context_tokens":1000,
        "llm":{"base_url":")" + s.url() + R"(","api_key":"sk-ant","model":"claude-big"},
        "compressor":{"model":"claude-small"}})");
    {
        ania::basic_bot<ania::bot_traits<ania::anthropic::client, ania::sqlite_store>> bot(cfg, sqlite_db::options(dir, log));
        CHECK(bot.respond("g:1", "你好").reply() == "好的");  // 900 reported: over 800
        CHECK(bot.respond("g:1", "再说一遍").reply() == "好的");
        CHECK(bot.memory().enabled());
    }
    std::lock_guard l(mu);
    CHECK(models == std::vector<std::string>{"claude-big", "claude-small", "claude-big"});  // the summary between
    for (const std::string& p : paths) CHECK(p.size() >= 9);
    for (const std::string& p : paths) CHECK(p.substr(p.size() - 9) == "/messages");
    for (const std::string& k : keys) CHECK(k == "sk-ant");
    ania::sqlite_store check(dir.file("bot.db"));
    const auto stored = check.load("g:1");
    REQUIRE_FALSE(stored.empty());
    CHECK(stored.front().text().find("聊了天") != std::string::npos);
}

// ---- the operator's console on its own (its cases over a bot are in console_cases.hpp) -------------------

TEST_CASE("console: never runs open; a bad listen address is an error; admin.token_file", "[console][admin]") {
    CHECK_THROWS_WITH(ania::parse_config(R"({"admin":{"enabled":true}})"), Catch::Contains("admin.token"));
    CHECK_THROWS_WITH(ania::admin::console({.listen = "127.0.0.1:0", .token = ""}, {}), Catch::Contains("no token"));
    CHECK_THROWS_WITH(ania::admin::console({.listen = "127.0.0.1", .token = "x"}, {}), Catch::Contains("host:port"));
    CHECK_THROWS_WITH(ania::admin::console({.listen = "127.0.0.1:99999", .token = "x"}, {}), Catch::Contains("bad port"));
    ania_test::temp_dir dir;
    {
        std::ofstream(dir.file("token")) << "from-a-file\n";
    }
    const auto cfg = ania::parse_config(R"({"admin":{"enabled":true,"listen":"127.0.0.1:0","token_file":")" + dir.file("token") + R"("}})");
    CHECK(ania::admin::console_options_from(cfg).token == "from-a-file");
    // The console's knobs reach it from admin.* (a bot builds its console from the configuration only).
    const auto knobs = ania::admin::console_options_from(
        ania::parse_config(R"({"admin":{"token":"t","busy_threads":3,"requests_per_second":5.5,"burst":20}})"));
    CHECK(knobs.busy_threads == 3);
    CHECK(knobs.requests_per_second == 5.5);
    CHECK(knobs.burst == 20);
    const auto defaults = ania::admin::console_options_from(ania::parse_config(R"({"admin":{"token":"t"}})"));
    CHECK(defaults.busy_threads == ania::admin::console_options{}.busy_threads);
    CHECK(defaults.requests_per_second == ania::admin::console_options{}.requests_per_second);
    CHECK(defaults.burst == ania::admin::console_options{}.burst);
    for (const char* bad : {R"({"admin":{"busy_threads":-1}})", R"({"admin":{"busy_threads":1025}})",
                            R"({"admin":{"requests_per_second":-1}})", R"({"admin":{"burst":0.5}})"})
        CHECK_THROWS_WITH(ania::parse_config(bad), Catch::Contains("admin."));
    const auto missing = ania::parse_config(R"({"admin":{"enabled":true,"token_file":")" + dir.file("nope") + R"("}})");
    CHECK_THROWS_WITH(ania::admin::console_options_from(missing), Catch::Contains("cannot read"));
    // Two consoles cannot share a port: the second says so.
    ania::admin::console first({.listen = "127.0.0.1:0", .token = "x", .log = {}}, {});
    CHECK_THROWS_WITH(ania::admin::console({.listen = "127.0.0.1:" + std::to_string(first.port()), .token = "x", .log = {}}, {}),
                      Catch::Contains("cannot listen"));
}

TEST_CASE("console: past the rate limit an address gets 429, before its token is even looked at", "[console][admin]") {
    ania::admin::console c({.listen = "127.0.0.1:0", .token = "secret", .requests_per_second = 1, .burst = 5, .log = {}}, {});
    httplib::Client cli("127.0.0.1", c.port());
    int ok = 0, limited = 0;
    for (int i = 0; i < 8; ++i) {
        const auto r = cli.Get("/api/scopes", {{"Authorization", "Bearer wrong"}});
        REQUIRE(r);
        ok += r->status == 401;
        limited += r->status == 429;
    }
    CHECK(ok == 5);
    CHECK(limited == 3);
}

namespace {
/// A memory view whose scopes() takes 100 ms and records how many calls run at once.
struct slow_scopes_view final : ania::admin::memory_view {
    std::mutex m;
    int now = 0, peak = 0;
    std::vector<std::string> scopes() override {
        {
            std::lock_guard l(m);
            peak = std::max(peak, ++now);
        }
        std::this_thread::sleep_for(std::chrono::milliseconds(100));
        std::lock_guard l(m);
        --now;
        return {"g:1"};
    }
    std::vector<ania::memory::entry> list(std::string_view, std::string_view) override { return {}; }
    ania::memory::entry create(std::string_view, std::string_view, std::string_view, std::vector<std::string>) override { throw std::logic_error("unused"); }
    ania::memory::entry update(std::string_view, std::string_view, std::optional<std::string_view>, std::optional<std::string_view>,
                               std::optional<std::vector<std::string>>) override {
        throw std::logic_error("unused");
    }
    void remove(std::string_view, std::string_view) override {}
    std::vector<ania::memory::memory_version> history(std::string_view, std::string_view) override { return {}; }
    ania::memory::entry restore(std::string_view, std::string_view, std::uint64_t) override { throw std::logic_error("unused"); }
};
} // namespace

TEST_CASE("console: at most busy_threads API requests are worked on at once; the others wait, none is refused", "[console][admin]") {
    const std::size_t width = GENERATE(std::size_t{1}, std::size_t{2});
    slow_scopes_view view;
    ania::admin::console c({.listen = "127.0.0.1:0", .token = "t", .requests_per_second = 0, .log = {}, .busy_threads = width},
                           {.memory = &view, .log = {}});
    std::atomic<int> ok{0};
    std::vector<std::thread> operators;
    for (int i = 0; i < 6; ++i)
        operators.emplace_back([&] {
            httplib::Client cli("127.0.0.1", c.port());
            const auto r = cli.Get("/api/scopes", {{"Authorization", "Bearer t"}});
            if (r && r->status == 200) ++ok;
        });
    for (auto& t : operators) t.join();
    CHECK(ok == 6);
    CHECK(view.peak >= 1);
    CHECK(static_cast<std::size_t>(view.peak) <= width);  // without the limit: up to 6 (16 workers)
}

TEST_CASE("console: the rate limiter's table is bounded, and new addresses cannot reset a refused one", "[console][admin]") {
    using lim = ania::admin::detail::rate_limiter;
    lim l(1, 2, 4);  // 1 request/s, burst 2, at most 4 addresses
    const lim::clock::time_point t0 = lim::clock::now();
    for (const char* a : {"a", "b", "c", "d"}) {
        CHECK(l.allow(a, t0));
        CHECK(l.allow(a, t0));
        CHECK_FALSE(l.allow(a, t0));  // each spent its burst
    }
    CHECK(l.addresses() == 4);
    // A flood of new addresses while all four are spent: they share one overflow bucket, the table stays at 4,
    // and "a" stays refused (emptying the table would have given it a fresh burst).
    int admitted = 0;
    for (int i = 0; i < 100; ++i) admitted += l.allow("new" + std::to_string(i), t0);
    CHECK(admitted == 2);
    CHECK(l.addresses() == 4);
    CHECK_FALSE(l.allow("a", t0));
    // Two seconds later the four have refilled (the same as no bucket): a new address finds a place.
    const auto t2 = t0 + std::chrono::seconds(2);
    CHECK(l.allow("e", t2));
    CHECK(l.addresses() == 1);
    CHECK(l.allow("e", t2));
    CHECK_FALSE(l.allow("e", t2));
    CHECK(l.allow("a", t2));  // refilled, a fresh bucket
}

TEST_CASE("console: the CSP hash sources (RFC 4648 base64 of SHA-256)", "[console][admin]") {
    using ania::admin::detail::base64;
    const auto b64 = [](std::string_view s) { return base64(reinterpret_cast<const std::uint8_t*>(s.data()), s.size()); };
    CHECK(b64("") == "");
    CHECK(b64("f") == "Zg==");
    CHECK(b64("fo") == "Zm8=");
    CHECK(b64("foo") == "Zm9v");
    CHECK(b64("foobar") == "Zm9vYmFy");
    CHECK(b64("\xff\xfe\xfd") == "//79");
    CHECK(ania::admin::detail::csp_hash("") == "'sha256-47DEQpj8HBSa+/TImW+5JCeuQeRkm5NMpJWZG3hSuFU='");
    CHECK(ania::admin::detail::csp_hash("abc") == "'sha256-ungWv48Bz+pBQUDeXa4iI7ADYaOWF3qctBD/YfIAFa0='");
}

TEST_CASE("console: the constant-time token compare", "[console][admin]") {
    using ania::admin::detail::same_secret;
    CHECK(same_secret("abc", "abc"));
    CHECK_FALSE(same_secret("abc", "abd"));
    CHECK_FALSE(same_secret("abc", "ab"));
    CHECK_FALSE(same_secret("", "a"));
    CHECK(same_secret("", ""));
}
