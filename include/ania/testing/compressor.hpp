// ania/testing/compressor.hpp -- the conformance kit of compressor: valid in, valid out; keep_from <= n; a
// failure leaves the history; tokens accounted; repeated compression converges under any budget.
// SPDX-License-Identifier: MIT
//
//     #include <ania/testing/compressor.hpp>
//     template <> struct ania::testing::compressor_fixture<my_compressor> {
//         my_compressor make();          // one that works (with a scripted client, if it calls a model)
//         my_compressor make_failing();  // optional: one whose compress fails (the model is down)
//         ania::usage expected_usage();  // optional: what one successful compress reports
//     };
//     using compressors = std::tuple<ania::truncate_oldest_half, my_compressor>;
//     ANIA_TEST_COMPRESSORS(compressors)
#pragma once

#include <catch2/catch.hpp>

#include <cstddef>
#include <string>
#include <vector>

#include <ania/concepts.hpp>
#include <ania/context/maybe_compress.hpp>
#include <ania/context/token_counter.hpp>
#include <ania/context/token_window.hpp>
#include <ania/message.hpp>
#include <ania/transcript.hpp>

namespace ania::testing {

/// Makes the compressors a test runs on; the default constructs one.
template <class C>
struct compressor_fixture {
    C make() { return C{}; }
};

/// Valid histories of `turns` turns, with tool calls (parallel ones too) every few turns.
inline std::vector<message> sample_history(std::size_t turns, std::size_t text = 60) {
    std::vector<message> h;
    for (std::size_t t = 0; t < turns; ++t) {
        const std::string n = std::to_string(t);
        h.push_back(message::user("问题 " + n + " " + std::string(text, 'q')));
        if (t % 3 == 1) {
            h.push_back(message::assistant_calls({{"c" + n + "a", "function", "memory_search", R"({"query":"x"})", {}, {}},
                                                  {"c" + n + "b", "function", "memory_search", R"({"query":"y"})", {}, {}}}));
            h.push_back(message::tool_result("c" + n + "a", "[]"));
            h.push_back(message::tool_result("c" + n + "b", "[]"));
        }
        h.push_back(message::assistant("回答 " + n + " " + std::string(text, 'a')));
    }
    return h;
}

/// The history a compression result stands for: prefix + history[keep_from..].
inline std::vector<message> apply_result(std::span<const message> history, const compression_result& r) {
    std::vector<message> out(r.prefix.begin(), r.prefix.end());
    if (r.keep_from < history.size()) out.insert(out.end(), history.begin() + static_cast<std::ptrdiff_t>(r.keep_from), history.end());
    return out;
}

} // namespace ania::testing

/// Defines the conformance test cases over every compressor type of the tuple `TypeList`.
#define ANIA_TEST_COMPRESSORS(TypeList)                                                                                  \
    TEMPLATE_LIST_TEST_CASE("compressor: a valid history gives a valid, shorter-or-equal one", "[compressor][conformance]", TypeList) { \
        ania::testing::compressor_fixture<TestType> fx;                                                                  \
        for (const std::size_t turns : {0u, 1u, 2u, 3u, 7u, 20u}) {                                                      \
            INFO(turns << " turns");                                                                                     \
            auto comp = fx.make();                                                                                       \
            const auto h = ania::testing::sample_history(turns);                                                         \
            REQUIRE(ania::is_valid_transcript(h));                                                                       \
            const ania::compression_result r = comp.compress({h, {}});                                                   \
            if (!r.ok) continue; /* a compressor may refuse a history it cannot shrink */                               \
            CHECK(r.keep_from <= h.size());                                                                              \
            const auto after = ania::testing::apply_result(h, r);                                                        \
            CHECK(ania::is_valid_transcript(after));                                                                     \
            CHECK(after.size() <= h.size() + 1); /* at most one summary replaces what it drops */                        \
        }                                                                                                                \
    }                                                                                                                    \
    TEMPLATE_LIST_TEST_CASE("compressor: a failure leaves the history as it was", "[compressor][conformance]", TypeList) { \
        ania::testing::compressor_fixture<TestType> fx;                                                                  \
        if constexpr (requires { fx.make_failing(); }) {                                                                 \
            auto comp = fx.make_failing();                                                                               \
            ania::token_window<> w(ania::window_options{100, 0.8});                                                      \
            w.append(ania::testing::sample_history(10));                                                                 \
            const std::vector<ania::message> before(w.messages().begin(), w.messages().end());                           \
            ania::turn_stats stats;                                                                                      \
            ania::compress_options hooks;                                                                                  \
            hooks.log = [](ania::log_level, std::string_view) {};                                                        \
            const auto report = ania::maybe_compress(w, comp, stats, hooks);                                             \
            CHECK(report.status == ania::compress_status::failed);                                                       \
            CHECK(std::vector<ania::message>(w.messages().begin(), w.messages().end()) == before);                       \
        }                                                                                                                \
    }                                                                                                                    \
    TEMPLATE_LIST_TEST_CASE("compressor: the tokens it spends are accounted", "[compressor][conformance]", TypeList) {  \
        ania::testing::compressor_fixture<TestType> fx;                                                                  \
        auto comp = fx.make();                                                                                           \
        const auto h = ania::testing::sample_history(10);                                                                \
        const ania::compression_result r = comp.compress({h, {}});                                                       \
        if constexpr (requires { fx.expected_usage(); }) CHECK(r.used == fx.expected_usage());                           \
        auto again = fx.make();                                                                                          \
        ania::token_window<> w(ania::window_options{100, 0.8});                                                          \
        w.append(std::vector<ania::message>(h));                                                                         \
        ania::turn_stats stats;                                                                                          \
        ania::compress_options hooks;                                                                                      \
        hooks.log = [](ania::log_level, std::string_view) {};                                                            \
        const auto report = ania::maybe_compress(w, again, stats, hooks);                                                \
        CHECK(stats.compress_usage == report.used);                                                                      \
        CHECK(stats.iterations == 0); /* compression is not a round of the request */                                   \
        if constexpr (requires { fx.expected_usage(); }) CHECK(report.used == fx.expected_usage());                      \
    }                                                                                                                    \
    TEMPLATE_LIST_TEST_CASE("compressor: repeated compression converges under the budget", "[compressor][conformance]", TypeList) { \
        ania::testing::compressor_fixture<TestType> fx;                                                                  \
        for (const std::int64_t budget : {std::int64_t{50}, std::int64_t{400}, std::int64_t{3000}}) {                    \
            INFO("budget " << budget);                                                                                   \
            auto comp = fx.make();                                                                                       \
            ania::token_window<> w(ania::window_options{budget, 0.8});                                                   \
            w.append(ania::testing::sample_history(60));                                                                 \
            ania::turn_stats stats;                                                                                      \
            ania::compress_options hooks;                                                                                  \
            hooks.log = [](ania::log_level, std::string_view) {};                                                        \
            int rounds = 0;                                                                                              \
            while (w.compression_due() && rounds < 64) {                                                                 \
                const auto report = ania::maybe_compress(w, comp, stats, hooks);                                         \
                REQUIRE(report.status == ania::compress_status::compressed);                                             \
                CHECK(ania::is_valid_transcript(w.messages()));                                                          \
                ++rounds;                                                                                                \
            }                                                                                                            \
            CHECK_FALSE(w.compression_due());                                                                            \
        }                                                                                                                \
    }
