// tests/unit/config.cpp -- the spec's defaults, loading from JSON, and errors that name the key.
#include <catch2/catch.hpp>

#include <ania/config.hpp>
#include <ania/config/io.hpp>  // load_config<section> for sections of its own; the JSON API

TEST_CASE("defaults are the spec's", "[config]") {
    const ania::config c;
    CHECK(c.max_context_tokens == 128000);
    CHECK(c.compress_ratio == Approx(0.8));
    CHECK(c.compressor.model.empty());  // none configured: reuse the main model
    CHECK(c.session.max_idle_minutes == 120);
    CHECK(c.session.max_sessions == 128);
    CHECK(c.session.group_auto_clear == 30);
    CHECK(c.memory.max_entries == 200);
    CHECK(c.memory.max_content_runes == 2000);
    CHECK_FALSE(c.memory.auto_inject);
    CHECK(c.memory.inject_entries == 3);
    CHECK(c.memory.inject_runes == 1500);
    CHECK_FALSE(c.memory.near_duplicate_threshold);  // the similarity policy's own (0.55 for Dice)
    CHECK_FALSE(c.memory.fold_case_and_width);        // exact duplicates: white space folded only
    CHECK_FALSE(c.multimodal);
    CHECK(c.ocr.model.find("Qwen3-VL") != std::string::npos);
    CHECK(c.wire_cache);
}

TEST_CASE("a JSON object overrides only the keys it names", "[config]") {
    const auto c = ania::parse_config(R"({"max_context_tokens":32000,"session":{"max_sessions":0},
        "compressor":{"model":"deepseek-chat","base_url":"https://api.deepseek.com"},"memory":{"auto_inject":true},
        "multimodal":true,"compress_ratio":1})");
    CHECK(c.max_context_tokens == 32000);
    CHECK(c.session.max_sessions == 0);
    CHECK(c.session.max_idle_minutes == 120);
    CHECK(c.compressor.model == "deepseek-chat");
    CHECK(c.memory.auto_inject);
    CHECK(c.multimodal);
    CHECK(c.compress_ratio == 1.0);
    CHECK(ania::parse_config("{}").max_context_tokens == 128000);
    // The window's request-bytes cache, off: the window built from the configuration has it off.
    CHECK(ania::from_config<ania::window_options>(ania::parse_config("{}")).wire_cache);
    CHECK_FALSE(ania::from_config<ania::window_options>(ania::parse_config(R"({"wire_cache":false})")).wire_cache);
}

TEST_CASE("the config round-trips through JSON", "[config]") {
    ania::config c;
    c.max_context_tokens = -1;
    c.ocr.api_key = std::string("k");  // not = "k": g++ 12 -O2 warns falsely in _M_replace (-Wstringop-overflow)
    c.memory.max_entries = 5;
    c.memory.near_duplicate_threshold = 0.6;
    auto back = ania::load_config(ania::to_json(c));
    CHECK(back.memory.near_duplicate_threshold == 0.6);
    c.memory.near_duplicate_threshold.reset();  // absent is written as null and read back as absent
    CHECK(ania::to_json(c)["memory"]["near_duplicate_threshold"].is_null());
    back = ania::load_config(ania::to_json(c));
    CHECK_FALSE(back.memory.near_duplicate_threshold);
    CHECK(back.max_context_tokens == -1);
    CHECK(back.ocr.api_key == "k");
    CHECK(back.memory.max_entries == 5);
    CHECK(ania::to_json(back) == ania::to_json(c));
}

TEST_CASE("unknown keys and wrong types are errors naming the key", "[config][bad-input]") {
    const auto fails = [](const char* text, const std::string& what) {
        INFO(text);
        CHECK_THROWS_WITH(ania::parse_config(text), Catch::Contains(what));
        CHECK_THROWS_AS(ania::parse_config(text), ania::error);
    };
    fails(R"({"max_context":1})",
          "unknown key \"max_context\"; valid keys: max_context_tokens, compress_ratio, wire_cache, llm, compressor, session, history, memory, ocr, postgres, admin, multimodal");
    fails(R"({"session":{"max_idle":5}})",
          "unknown key \"session.max_idle\"; valid keys in session: max_idle_minutes, max_sessions, group_auto_clear");
    fails(R"({"max_context_tokens":"128k"})", "max_context_tokens: expected an integer, got string");
    fails(R"({"max_context_tokens":1.5})", "max_context_tokens: expected an integer, got number");
    fails(R"({"memory":{"auto_inject":1}})", "memory.auto_inject: expected a boolean, got number");
    fails(R"({"compressor":{"model":null}})", "compressor.model: expected a string, got null");
    fails(R"({"session":[]})", "session: expected an object, got array");
    fails(R"([])", "the configuration: expected an object, got array");
    fails(R"({"compress_ratio":0})", "compress_ratio: must be in (0.05, 1]");
    fails(R"({"compress_ratio":1.5})", "compress_ratio: must be in (0.05, 1]");
    fails(R"({"compress_ratio":1e-320})", "compress_ratio: must be in (0.05, 1]");
    fails(R"({"compress_ratio":0.05})", "compress_ratio: must be in (0.05, 1]");
    fails(R"([1,2])", "invalid_config: the configuration: expected an object, got array");
    fails(R"({"memory":{"near_duplicate_threshold":0}})", "memory.near_duplicate_threshold: must be in (0, 1]");
    fails(R"({"memory":{"near_duplicate_threshold":"high"}})", "memory.near_duplicate_threshold: expected a number, got string");
    fails(R"({"memory":{"inject_entries":-1}})", "memory.inject_entries: must be >= 0");
    fails(R"({"session":{"max_sessions":-1}})", "session.max_sessions: must be >= 0");
    fails(R"({"memory":{"max_entries":0}})", "memory.max_entries: must be > 0");
    fails(R"({"max_context_tokens":18446744073709551615})", "integer out of range");
    fails(R"({"max_context_tokens":)", "parse_error");
}

TEST_CASE("history.archive.* reaches the agent and the store's bounds; bad values name the key", "[config][archive]") {
    const ania::config c = ania::parse_config(
        R"({"history": {"archive": {"enabled": true, "max_messages": 50, "max_bytes": 4096, "keep_on_clear": true}}})");
    CHECK(ania::from_config<ania::agent_options>(c).archive);
    CHECK_FALSE(ania::from_config<ania::agent_options>(ania::config{}).archive);
    const auto a = ania::from_config<ania::archive_options>(c);
    CHECK(a.max_messages == 50);
    CHECK(a.max_bytes == 4096);
    CHECK(a.keep_on_clear);
    CHECK(ania::parse_config(ania::to_json(c).dump()).history.archive.max_bytes == 4096);
    for (const char* bad : {R"({"history": {"archive": {"max_messages": -1}}})", R"({"history": {"archive": {"max_bytes": -5}}})",
                            R"({"history": {"archive": {"enabeld": true}}})", R"({"history": {"archive": {"enabled": "yes"}}})"}) {
        try {
            (void)ania::parse_config(bad);
            FAIL("accepted " << bad);
        } catch (const ania::error& e) {
            CHECK(std::string(e.what()).find("history.archive.") != std::string::npos);
        }
    }
}

TEST_CASE("compressor.stack_summaries reaches the summary's options", "[config][cache]") {
    const auto o = ania::from_config<ania::agent_options>(ania::parse_config(R"({"compressor": {"stack_summaries": 4}})"));
    REQUIRE(o.summary);
    CHECK(o.summary->stack_summaries == 4);
    CHECK_FALSE(ania::from_config<ania::agent_options>(ania::config{}).summary);
    CHECK_THROWS_WITH(ania::parse_config(R"({"compressor": {"stack_summaries": -1}})"), Catch::Contains("compressor.stack_summaries"));
}
