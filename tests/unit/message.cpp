// tests/unit/message.cpp -- the message model in the OpenAI wire format: round trips, real wire examples,
// unknown fields, options, usage and statistics, and bad input.
#include <catch2/catch.hpp>

#include <random>
#include <string>
#include <vector>

#include <ania/json.hpp>
#include <ania/json_writer.hpp>

#include "bench_data.hpp"
#include "random_messages.hpp"

using ania::json;
using ania::message;
using namespace std::string_literals;

namespace {

using ania_test::random_message;

void check_byte_identical(const std::string& wire) {
    INFO(wire);
    const message m = ania::parse_message(wire);
    CHECK(ania::dump(m) == wire);
}

} // namespace

TEST_CASE("random messages survive JSON and JSON text", "[message][property]") {
    std::mt19937 rng(7);
    for (int i = 0; i < 3000; ++i) {
        const message m = random_message(rng);
        CHECK(ania::message_from_json(ania::to_json(m)) == m);
        const message back = ania::parse_message(ania::dump(m));
        CHECK(back == m);
        CHECK(ania::dump(back) == ania::dump(m));
    }
}

TEST_CASE("real wire examples survive byte for byte", "[message]") {
    check_byte_identical(R"({"role":"system","content":"You are Ania."})");
    check_byte_identical(R"({"role":"user","content":"hi","name":"alice"})");
    // OpenAI tool call response message, including members ania does not model.
    check_byte_identical(R"({"role":"assistant","content":null,"tool_calls":[{"id":"call_abc","type":"function","function":{"name":"get_weather","arguments":"{\"city\":\"Paris\"}"}}],"refusal":null,"annotations":[]})");
    // Parallel calls.
    check_byte_identical(R"({"role":"assistant","content":null,"tool_calls":[{"id":"a","type":"function","function":{"name":"f","arguments":"{}"}},{"id":"b","type":"function","function":{"name":"g","arguments":"{\"x\":[1,2]}"}}]})");
    // A tool result with tool_call_id before content (the data set's order).
    check_byte_identical(R"({"role":"tool","tool_call_id":"a","content":"{\"ok\":true}"})");
    // Image parts, with and without detail, and an unmodelled part type.
    check_byte_identical(R"({"role":"user","content":[{"type":"text","text":"what is this?"},{"type":"image_url","image_url":{"url":"https://example.com/a.png","detail":"high"}},{"type":"image_url","image_url":{"url":"data:image/png;base64,AAAA"}},{"type":"input_audio","input_audio":{"data":"UklG","format":"wav"}}]})");
    // DeepSeek reasoning, and provider extras at every level.
    check_byte_identical(R"({"role":"assistant","content":"42","reasoning_content":"think think","x_meta":{"k":[1,{"z":null}]}})");
    check_byte_identical(R"({"role":"assistant","content":"","tool_calls":[{"id":"c","type":"function","function":{"name":"f","arguments":"","strict":true},"index":0}],"audio":null})");
    check_byte_identical(R"({"role":"developer","content":"be brief"})");
    check_byte_identical(R"({"content":"order kept","role":"user"})");
}

TEST_CASE("every message of the shared data set survives byte for byte", "[message][golden]") {
    const auto lines = ania_test::load_lines("history_10k");
    std::size_t calls = 0, tools = 0;
    for (const std::string& line : lines) {
        const message m = ania::parse_message(line);
        calls += m.has_tool_calls();
        tools += m.is_tool_result();
        REQUIRE(ania::dump(m) == line);
    }
    const ania::json want = ania_test::manifest().at("history_10k");
    CHECK(tools == want.at("tool_msgs").get<std::size_t>());
    CHECK(calls == want.at("assistant_with_tool_calls").get<std::size_t>());
}

TEST_CASE("the direct parser and the general one agree", "[message][parser]") {
    const auto same = [](const std::string& wire) {
        INFO(wire);
        const message fast = ania::parse_message(wire);
        const message general = ania::detail::parse_message_general(wire, {});
        CHECK(fast == general);
        CHECK(fast.wire_order == general.wire_order);
        CHECK(ania::dump(fast) == ania::dump(general));
    };
    for (const std::string& line : ania_test::load_lines("history_10k")) {
        message m;
        REQUIRE(ania::detail::fast_message_parser(line).parse(m));  // the data set's shapes are the common ones
        same(line);
    }
    same(R"({"role":"user","content":"esc \" \\ \/ \b \f \n \r \t \u00e9 \u4e2d \ud83d\ude00 end"})");
    same(R"(  { "role" : "assistant" , "content" : null , "tool_calls" : [ { "id" : "a" , "type" : "function" , "function" : { "name" : "f" , "arguments" : "{}" } } ] }  )");
    same(R"({"role":"user","content":[{"type":"text","text":"t"},{"type":"image_url","image_url":{"url":"u","detail":"low"}}]})");
    same(R"({"role":"user","content":[]})");
    same(R"({"role":"assistant","content":"x","reasoning_content":null})");
    same(R"({"role":"tool","tool_call_id":"x","content":"y","name":"n"})");
    // Shapes the direct parser hands over: extras, other key orders, numbers, duplicates.
    for (const char* other : {R"({"role":"user","content":"x","extra":1})", R"({"content":"x","role":"user","role":"user"})",
                              R"({"role":"user","content":[{"text":"t","type":"text"}]})",
                              R"({"role":"assistant","tool_calls":[{"type":"function","id":"a","function":{"arguments":"{}","name":"f"}}]})"}) {
        message m;
        CHECK_FALSE(ania::detail::fast_message_parser(other).parse(m));
    }
    same(R"({"role":"user","content":"x","extra":1})");
    // Invalid input is refused by both, with the general parser's error.
    for (const char* bad : {R"({"role":"user","content":"\ud800"})", R"({"role":"user","content":"x"} trailing)",
                            "{\"role\":\"user\",\"content\":\"raw\ncontrol\"}", R"({"role":"user","content":"x",})", R"({"role":"user")"}) {
        INFO(bad);
        message m;
        CHECK_FALSE(ania::detail::fast_message_parser(bad).parse(m));
        CHECK_THROWS_AS(ania::parse_message(bad), ania::error);
    }
}

TEST_CASE("members are read into the model", "[message]") {
    const message m = ania::parse_message(
        R"({"role":"assistant","content":null,"reasoning_content":"r","tool_calls":[{"id":"x","type":"function","function":{"name":"memory_save","arguments":"{\"content\":\"hi\"}"}}]})");
    CHECK(m.role == ania::role::assistant);
    CHECK(m.form == ania::content_form::null);
    CHECK(m.content_empty());
    REQUIRE(m.tool_calls.size() == 1);
    CHECK(m.tool_calls[0].id == "x");
    CHECK(m.tool_calls[0].name == "memory_save");
    CHECK(m.tool_calls[0].arguments == R"({"content":"hi"})");
    CHECK(m.reasoning_content == "r");

    const message parts = ania::parse_message(
        R"({"role":"user","content":[{"type":"text","text":"a"},{"type":"image_url","image_url":{"url":"u","detail":"low"}},{"type":"text","text":"b"}]})");
    CHECK(parts.form == ania::content_form::parts);
    REQUIRE(parts.parts.size() == 3);
    CHECK(parts.parts[1].type == ania::content_part::kind::image_url);
    CHECK(parts.parts[1].url == "u");
    CHECK(parts.parts[1].detail == "low");
    CHECK(parts.text() == "a\nb");
}

TEST_CASE("an arguments object is kept as its JSON text", "[message]") {
    const message m = ania::parse_message(
        R"({"role":"assistant","content":null,"tool_calls":[{"id":"x","type":"function","function":{"name":"f","arguments":{"a":1}}}]})");
    CHECK(m.tool_calls[0].arguments == R"({"a":1})");
}

TEST_CASE("the content of a tool-call-only assistant message is an option", "[message]") {
    message m = message::assistant_calls({{"id1", "function", "f", "{}", {}, {}}});
    using tcc = ania::write_options::tool_call_content;
    CHECK(ania::to_json(m).at("content").is_null());
    CHECK(ania::to_json(m, {tcc::empty_string}).at("content") == "");
    CHECK_FALSE(ania::to_json(m, {tcc::omit}).contains("content"));
    m.form = ania::content_form::text;  // built with "" in code
    CHECK(ania::to_json(m).at("content") == "");
    CHECK(ania::to_json(m, {tcc::null}).at("content").is_null());
    // Text content is never touched by the option.
    message t = message::assistant("hello");
    t.tool_calls = m.tool_calls;
    CHECK(ania::to_json(t, {tcc::null}).at("content") == "hello");
}

TEST_CASE("reasoning_content can be left out of requests", "[message]") {
    message m = message::assistant("x");
    m.reasoning_content = "why";
    CHECK(ania::to_json(m).contains("reasoning_content"));
    ania::write_options opt;
    opt.include_reasoning = false;
    CHECK_FALSE(ania::to_json(m, opt).contains("reasoning_content"));
}

TEST_CASE("usage is read from OpenAI and DeepSeek responses", "[message][usage]") {
    const auto openai = ania::usage_from_json(ania::parse_json(
        R"({"prompt_tokens":100,"completion_tokens":20,"total_tokens":120,"prompt_tokens_details":{"cached_tokens":64}})"));
    CHECK(openai.prompt_tokens == 100);
    CHECK(openai.completion_tokens == 20);
    CHECK(openai.total_tokens == 120);
    CHECK(openai.cached_prompt_tokens == 64);
    const auto deepseek = ania::usage_from_json(ania::parse_json(R"({"prompt_tokens":5,"prompt_cache_hit_tokens":3})"));
    CHECK(deepseek.cached_prompt_tokens == 3);
    CHECK_FALSE(deepseek.completion_tokens.has_value());
    CHECK(ania::usage_from_json(json()).empty());
    CHECK(ania::usage_from_json(ania::to_json(openai)) == openai);
    CHECK_THROWS_WITH(ania::usage_from_json(ania::parse_json(R"({"prompt_tokens":"many"})")),
                      Catch::Contains("usage.prompt_tokens: expected an integer"));
}

TEST_CASE("usage from upstream: huge counts saturate, negative ones are not counts, sums never overflow", "[message][usage][bad-input]") {
    std::vector<std::string> logged;
    const ania::log_sink log = [&](ania::log_level, std::string_view t) { logged.emplace_back(t); };
    const auto big = ania::usage_from_json(ania::parse_json(R"({"prompt_tokens":18446744073709551615,"completion_tokens":-5,"total_tokens":9223372036854775807})"), log);
    CHECK(big.prompt_tokens == INT64_MAX);
    CHECK_FALSE(big.completion_tokens);  // -5 is not a count
    CHECK(big.total_tokens == INT64_MAX);
    CHECK(logged.size() == 2);
    ania::usage sum = big;
    sum += big;  // INT64_MAX + INT64_MAX: saturates (UBSan would report an overflow)
    CHECK(sum.prompt_tokens == INT64_MAX);
    ania::turn_stats s;
    s.record_call(big);
    s.record_call(big);
    CHECK(s.total.total_tokens == INT64_MAX);
    CHECK(s.last_prompt_tokens == INT64_MAX);
    CHECK_THROWS_WITH(ania::usage_from_json(ania::parse_json(R"({"prompt_tokens":"12"})")), Catch::Contains("usage.prompt_tokens"));
}

TEST_CASE("turn statistics keep the last call's prompt tokens and count compression apart", "[message][usage]") {
    ania::turn_stats s;
    s.record_call({1000, 10, 1010, {}});
    s.record_call({1500, 20, 1520, 900});
    s.record_compression({800, 100, 900, {}});
    CHECK(s.iterations == 2);
    CHECK(s.last_prompt_tokens == 1500);  // not the 2500 sum
    CHECK(s.total.prompt_tokens == 2500);
    CHECK(s.total.cached_prompt_tokens == 900);
    CHECK(s.compress_usage.total_tokens == 900);
    s.record_call({});  // no usage reported: the context size stays what was last known
    CHECK(s.last_prompt_tokens == 1500);
    CHECK(ania::to_json(s).at("iterations") == 3);
}

TEST_CASE("invalid UTF-8 in every string field is repaired to U+FFFD", "[message][bad-input]") {
    const std::string bad = "\xFF\xC0";
    const std::string fixed = "\xEF\xBF\xBD\xEF\xBF\xBD";
    // From JSON text.
    const std::string wire = R"({"role":"assistant","content":"a)" + bad + R"(","name":"n)" + bad +
                             R"(","reasoning_content":"r)" + bad + R"(","tool_calls":[{"id":"i)" + bad +
                             R"(","type":"function","function":{"name":"f)" + bad + R"(","arguments":"{)" + bad +
                             R"(}"}}],"x)" + bad + R"(":"v)" + bad + R"("})";
    const message m = ania::parse_message(wire);
    CHECK(m.content == "a" + fixed);
    CHECK(m.name == "n" + fixed);
    CHECK(m.reasoning_content == "r" + fixed);
    CHECK(m.tool_calls[0].id == "i" + fixed);
    CHECK(m.tool_calls[0].name == "f" + fixed);
    CHECK(m.tool_calls[0].arguments == "{" + fixed + "}");
    CHECK(ania::to_json(m.extra).at("x" + fixed) == "v" + fixed);
    CHECK_NOTHROW(ania::dump(m));
    // From a JSON value that a caller built with raw bytes (nlohmann stores them; dump() would throw).
    json j = {{"role", "tool"}, {"tool_call_id", "c" + bad}, {"content", json::array({{{"type", "text"}, {"text", "t" + bad}}})}};
    const message v = ania::message_from_json(j);
    CHECK(v.tool_call_id == "c" + fixed);
    CHECK(v.parts[0].text == "t" + fixed);
    // Built in code: the factories repair, and dump never throws even on raw assignment.
    CHECK(message::user("u" + bad).content == "u" + fixed);
    message raw = message::user("x");
    raw.content = "z" + bad;
    CHECK(ania::dump(raw) == R"({"role":"user","content":"z)" + fixed + R"("})");
}

TEST_CASE("nesting bombs are refused before nlohmann sees them", "[message][bad-input]") {
    const std::string bomb = R"({"role":"user","content":"x","x":)" + std::string(100000, '[') + std::string(100000, ']') + "}";
    CHECK_THROWS_MATCHES(ania::parse_message(bomb), ania::error,
                         Catch::Predicate<ania::error>([](const ania::error& e) { return e.code() == ania::errc::limit_exceeded; }));
    CHECK_THROWS_WITH(ania::parse_message(bomb), Catch::Contains("max_depth = 64"));
    // Brackets inside strings do not count.
    CHECK_NOTHROW(ania::parse_message(R"({"role":"user","content":")" + std::string(1000, '[') + R"("})"));
    // Exactly at the limit is fine.
    std::string ok = std::string(63, '[') + std::string(63, ']');
    CHECK_NOTHROW(ania::parse_json(R"({"a":)" + ok + "}"));
    CHECK_THROWS_AS(ania::parse_json(R"({"a":[)" + ok + "]}"), ania::error);
    // A deep JSON value built in code is refused too (copying it would overflow the stack).
    json deep = json::array();
    for (int i = 0; i < 200; ++i) deep = json::array({std::move(deep)});
    json m = {{"role", "user"}, {"content", "x"}, {"deep", deep}};
    CHECK_THROWS_WITH(ania::message_from_json(m), Catch::Contains("max_depth"));
}

TEST_CASE("a 10 MB message parses within the default limits and is refused by smaller ones", "[message][bad-input]") {
    const std::string big(10u << 20, 'a');
    const std::string wire = R"({"role":"user","content":")" + big + R"("})";
    const message m = ania::parse_message(wire);
    CHECK(m.content.size() == big.size());
    ania::parse_limits small;
    small.max_bytes = 1u << 20;
    CHECK_THROWS_WITH(ania::parse_message(wire, small), Catch::Contains("exceeds max_bytes = 1048576"));
}

TEST_CASE("wrong shapes name the member that is wrong", "[message][bad-input]") {
    const auto rejects = [](const std::string& wire, const std::string& what) {
        INFO(wire);
        CHECK_THROWS_WITH(ania::parse_message(wire), Catch::Contains(what));
    };
    rejects("[1,2]", "message: expected an object, got array");
    rejects(R"({"content":"x"})", "role: missing");
    rejects(R"({"role":"function","content":"x"})", "role: unknown role \"function\"");
    rejects(R"({"role":7})", "role: expected a string, got number");
    rejects(R"({"role":"user","content":7})", "content: expected a string, an array of parts or null");
    rejects(R"({"role":"user","content":[{"type":"text"}]})", "content[0].text: missing");
    rejects(R"({"role":"user","content":[{"type":"image_url","image_url":"u"}]})", "content[0].image_url: expected an object");
    rejects(R"({"role":"user","content":[3]})", "content[0]: expected an object, got number");
    rejects(R"({"role":"assistant","tool_calls":{}})", "tool_calls: expected an array, got object");
    rejects(R"({"role":"assistant","tool_calls":[{"type":"function","function":{"name":"f"}}]})", "tool_calls[0].id: missing");
    rejects(R"({"role":"assistant","tool_calls":[{"id":"a","function":{}}]})", "tool_calls[0].function.name: missing");
    rejects(R"({"role":"assistant","tool_calls":[{"id":"a","function":{"name":1}}]})", "tool_calls[0].function.name: expected a string");
    rejects(R"({"role":"tool","content":"x"})", "tool_call_id: a tool message needs a non-empty tool_call_id");
    rejects(R"({"role":"user","name":null})", "name: expected a string, got null");
    rejects(R"({"role":"user",)", "parse_error");
    rejects("", "parse_error");
    CHECK_THROWS_AS(ania::parse_message("not json"), ania::error);
}

TEST_CASE("nlohmann conversions use the same format", "[message]") {
    const message m = message::tool_result("id", "res");
    json j = m;
    CHECK(j.dump() == R"({"role":"tool","content":"res","tool_call_id":"id"})");
    CHECK(j.get<message>() == m);
}

#include <cstdlib>
#include <filesystem>
#include <fstream>

#include "temp_dir.hpp"

TEST_CASE("the data set is checked against its manifest before use", "[bench-data]") {
    const std::string vendored = ania_test::bench_data_dir();
    ania_test::temp_dir dir;
    std::filesystem::copy_file(vendored + "/MANIFEST.json", dir.file("MANIFEST.json"));
    std::string gz = ania_test::read_file(vendored + "/history_1k.jsonl.gz");
    const auto put = [&](const std::string& bytes) {
        std::ofstream(dir.file("history_1k.jsonl.gz"), std::ios::binary | std::ios::trunc) << bytes;
    };
    struct env_guard {
        std::string old;
        bool had;
        explicit env_guard(const std::string& v) {
            const char* o = std::getenv("ANIA_BENCH_DATA");
            had = o != nullptr;
            if (had) old = o;
            setenv("ANIA_BENCH_DATA", v.c_str(), 1);
        }
        ~env_guard() { had ? (void)setenv("ANIA_BENCH_DATA", old.c_str(), 1) : (void)unsetenv("ANIA_BENCH_DATA"); }
    } guard(dir.path().string());
    put(gz);
    // An intact copy elsewhere is used as is.
    CHECK(ania_test::load_lines("history_1k").size() == ania_test::manifest().at("history_1k").at("lines").get<std::size_t>());
    gz[gz.size() / 2] ^= 0x01;
    put(gz);
    CHECK_THROWS_WITH(ania_test::load_lines("history_1k"), Catch::Contains("does not match MANIFEST.json: sha256_gz"));
    put(gz.substr(0, 100));
    CHECK_THROWS_WITH(ania_test::load_lines("history_1k"), Catch::Contains("gz_bytes"));
    CHECK_THROWS_WITH(ania_test::load_lines("nonexistent"), Catch::Contains("MANIFEST.json has no entry"));
}

TEST_CASE("json_members: provider members as text in wire order, converted by json.hpp", "[message][extras]") {
    CHECK(ania::members_from(json::object()).empty());
    CHECK_THROWS_AS(ania::members_from(json::array()), ania::error);
    const auto m = ania::members_from(json::parse(R"({"z":1,"a":[true,null],"m":{"k":"v"}})"));
    CHECK(m.text() == R"({"z":1,"a":[true,null],"m":{"k":"v"}})");  // wire order, compact
    CHECK(ania::to_json(m).dump() == m.text());
    const ania::message parsed = ania::parse_message(R"({"role":"user","x_b":2,"content":"hi","x_a":1})");
    CHECK(parsed.extra.text() == R"({"x_b":2,"x_a":1})");
    CHECK(ania::dump(parsed) == R"({"role":"user","x_b":2,"x_a":1,"content":"hi"})");  // together, where the first stood
}

namespace {
std::string direct(const message& m, const ania::write_options& opt = {}) {
    std::string out;
    ania::append_json(out, m, opt);
    return out;
}
} // namespace

TEST_CASE("the direct writer escapes a character at every position of every length (the 32-byte scan's edges)", "[message][writer]") {
    for (std::size_t n = 1; n <= 100; ++n)
        for (std::size_t at = 0; at < n; ++at)
            for (const char c : {'"', '\\', '\n', '\x01', '\x1f'}) {
                std::string text(n, 'x');
                if (n > 40) text.replace(0, 6, "中文");  // multi-byte text before it
                if (at >= 6 || n <= 40) text[at] = c;
                std::string out;
                ania::detail::append_json_string(out, text);
                REQUIRE(out == json(text).dump());
            }
}

TEST_CASE("the direct writer checks UTF-8 in its one pass: an invalid sequence at every position of every length", "[message][writer][bad-input]") {
    // Valid text of n bytes (CJK, ASCII, an escape every few characters), then a bad sequence written over it
    // at `at`: the writer's own check must agree with the scalar validator, and a message holding it must come
    // out as dump writes it (U+FFFD for the bad bytes), whichever block of 32 the sequence falls in or across.
    const auto valid_text = [](std::size_t n) {
        static const char* const units[] = {"中", "a", "\n", "文", "\"", "x"};
        std::string t;
        for (std::size_t k = 0; t.size() < n; ++k) {
            const std::string_view u = units[k % 6];
            t += t.size() + u.size() <= n ? u : std::string_view("x");
        }
        return t;
    };
    const std::string bad_sequences[] = {"\xff", "\x80", "\xe4\xb8", "\xed\xa0\x80", "\xc0\xaf", "\xf4\x90\x80\x80", "\xf0\x9f\x98"};
    std::size_t checked = 0;
    for (std::size_t n = 1; n <= 100; ++n) {
        const std::string good = valid_text(n);
        REQUIRE(good.size() == n);
        std::string out;
        REQUIRE(ania::detail::append_json_string_checked(out, good));
        REQUIRE(out == json(good).dump());
        for (std::size_t at = 0; at < n; ++at)
            for (const std::string& bad : bad_sequences) {
                std::string text = good;
                text.replace(at, std::min(bad.size(), n - at), bad.substr(0, n - at));  // cut short at the end too
                const bool valid = ania::text::find_invalid_utf8(text) == std::string_view::npos;
                std::string written;
                REQUIRE(ania::detail::append_json_string_checked(written, text) == valid);
                message m = message::assistant("ok");
                m.content = text;
                REQUIRE(direct(m) == ania::dump(m));
                checked += !valid;
            }
    }
    CHECK(checked > 30000);  // nearly every placement is invalid: the check was really exercised
}

TEST_CASE("the direct writer writes the bytes dump writes", "[message][writer]") {
    // Every message of the data set, in its own wire order.
    for (const std::string& line : ania_test::load_lines("history_10k")) {
        const message m = ania::parse_message(line);
        REQUIRE(direct(m) == line);
    }
    // Random messages: control characters, quotes, NUL, emoji, images, calls, extras (which take dump's path).
    std::mt19937 rng(11);
    for (int i = 0; i < 3000; ++i) {
        const message m = random_message(rng);
        REQUIRE(direct(m) == ania::dump(m));
    }
    // Every control character is escaped as nlohmann escapes it.
    std::string controls;
    for (int c = 0; c < 0x20; ++c) controls.push_back(static_cast<char>(c));
    controls += "\"\\/\x7f";
    CHECK(direct(message::user(controls)) == ania::dump(message::user(controls)));
    // Invalid UTF-8 put into a field directly (the constructors repair it): dump's replacement, byte for byte.
    message bad = message::assistant("ok");
    bad.content = "a\xff\xc3" "b";
    bad.tool_calls.push_back({"id\xfe", "function", "f", "{}", {}, {}});
    CHECK(direct(bad) == ania::dump(bad));
    CHECK(direct(bad).find("\xef\xbf\xbd") != std::string::npos);
    // The options.
    using tcc = ania::write_options::tool_call_content;
    message calls = message::assistant_calls({{"c1", "function", "f", "{}", {}, {}}});
    calls.reasoning_content = "hmm";
    for (const tcc v : {tcc::keep, tcc::null, tcc::empty_string, tcc::omit})
        for (const bool reasoning : {true, false}) {
            const ania::write_options opt{v, reasoning};
            CHECK(direct(calls, opt) == ania::dump(calls, opt));
        }
}

TEST_CASE("a request body: model, the messages of every segment in order, the tools", "[message][writer]") {
    const std::vector<message> system{message::system("sys")};
    const std::vector<message> history{message::user("a"), message::assistant("b")};
    const std::vector<message> turn{message::user("c")};
    ania::tool t{"lookup", "looks up", json{{"type", "object"}}, {}};
    const ania::chat_request req{{system, history, turn}, std::span<const ania::tool>(&t, 1)};
    const json body = json::parse(ania::request_to_json(req, "m-1"));
    CHECK(body.at("model") == "m-1");
    REQUIRE(body.at("messages").size() == 4);
    CHECK(body.at("messages")[0].at("content") == "sys");
    CHECK(body.at("messages")[3].at("content") == "c");
    CHECK(body.at("tools")[0] == t.definition());
    // The tools are written byte for byte as definition().dump() would: quotes, control characters and invalid
    // UTF-8 in the name and the description, a schema with members, and none.
    ania::tool odd{"a\"b\x01\xff", "line\nnext \\ \xe4\xb8", json{{"type", "object"}, {"properties", {{"q", {{"type", "string"}}}}}}, {}};
    ania::tool none{"none", "", json::object(), {}};
    // No parameters: an object schema without properties (Anthropic rejects an input_schema without a type).
    CHECK(none.definition().at("function").at("parameters") == json{{"type", "object"}, {"properties", json::object()}});
    for (const ania::tool* x : {&t, &odd, &none}) {
        const std::string one = ania::request_to_json(ania::chat_request{{{}, history, {}}, std::span<const ania::tool>(x, 1)}, "m");
        CHECK_THAT(one, Catch::Contains(R"("tools":[)" + x->definition().dump(-1, ' ', false, json::error_handler_t::replace) + "]"));
    }
    // Empty segments anywhere are skipped; no tools: no member.
    const json bare = json::parse(ania::request_to_json(ania::chat_request{{{}, history, {}}}, "m"));
    CHECK(bare.at("messages").size() == 2);
    CHECK_FALSE(bare.contains("tools"));
}

TEST_CASE("message_sequence reads its segments as one sequence", "[message][writer]") {
    const std::vector<message> a{message::user("1")}, c{message::user("3"), message::user("4")};
    const ania::message_sequence s({}, a, c);
    REQUIRE(s.size() == 3);
    CHECK(s[0].content == "1");
    CHECK(s[2].content == "4");
    CHECK(s.front().content == "1");
    CHECK(s.back().content == "4");
    std::string seen;
    for (const message& m : s) seen += m.content;
    CHECK(seen == "134");
    CHECK(ania::message_sequence(a, {}, {}).back().content == "1");
    CHECK(ania::message_sequence().empty());
    CHECK(ania::message_sequence().begin() == ania::message_sequence().end());
}
