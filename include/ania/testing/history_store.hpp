// ania/testing/history_store.hpp -- the conformance kit of history_store: what every store must do.
// SPDX-License-Identifier: MIT
//
// For your own store, in a Catch2 v2 test file:
//
//     #include <ania/testing/history_store.hpp>
//     template <> struct ania::testing::store_fixture<my_store> {   // only if my_store{} is not enough
//         std::unique_ptr<my_store> make() { ... a fresh, empty store ... }
//         std::unique_ptr<my_store> reopen() { ... a second instance over the same data ... }  // if it persists
//     };
//     template <> struct ania::testing::store_capabilities<my_store> : ania::testing::default_store_capabilities<my_store> {
//         static constexpr bool persists = true;
//     };
//     using stores = std::tuple<ania::ram_store, my_store>;
//     ANIA_TEST_HISTORY_STORES(stores)
//
// Including this header defines no test; the macro does (once per test program).
#pragma once

#include <catch2/catch.hpp>

#include <algorithm>
#include <cstddef>
#include <memory>
#include <span>
#include <string>
#include <thread>
#include <vector>

#include <ania/concepts.hpp>
#include <ania/json.hpp>
#include <ania/message.hpp>

namespace ania::testing {

/// Makes the stores a test runs on. The default constructs one; specialise it for a store that needs
/// arguments (a file, a connection). `reopen()` (only when store_capabilities<S>::persists) returns a second
/// instance over what the last make() stored, as after a restart.
template <class S>
struct store_fixture {
    std::unique_ptr<S> make() { return std::make_unique<S>(); }
};

/// What the kit may expect of a store beyond the concept. Specialise (deriving from the default) to change.
template <class S>
struct default_store_capabilities {
    static constexpr bool persists = false;                        ///< survives reopen() (a file, a server)
    static constexpr bool drops_prefix = prefix_dropping_store<S>;  ///< has drop_front
    static constexpr bool thread_safe = true;                       ///< may be called from several threads at once
};
template <class S>
struct store_capabilities : default_store_capabilities<S> {};

/// One turn with everything a store must keep byte for byte: CJK, emoji, an embedded NUL, a tool call with
/// reasoning content, a tool result.
inline std::vector<message> sample_turn(const std::string& tag) {
    using namespace std::string_literals;
    message calls = message::assistant_calls({{"call_" + tag, "function", "memory_search", R"({"query":"小明"})", {}, {}}});
    calls.reasoning_content = "先查一下记忆 🤔";
    return {message::user("[nickname:小明 id:qq:1] 你好 " + tag + " 😀 nul\0inside"s), std::move(calls),
            message::tool_result("call_" + tag, R"({"hits":[]})"), message::assistant("记住了 ✅ " + tag)};
}

} // namespace ania::testing

/// Defines the conformance test cases over every store type of the tuple `TypeList`.
#define ANIA_TEST_HISTORY_STORES(TypeList)                                                                               \
    TEMPLATE_LIST_TEST_CASE("history store: round trip is byte-identical", "[store][conformance]", TypeList) {           \
        ania::testing::store_fixture<TestType> fx;                                                                       \
        auto store = fx.make();                                                                                          \
        const auto turn = ania::testing::sample_turn("1");                                                               \
        store->append("s", turn);                                                                                        \
        const auto back = store->load("s");                                                                              \
        REQUIRE(back.size() == turn.size());                                                                             \
        for (std::size_t i = 0; i < turn.size(); ++i) {                                                                 \
            CHECK(back[i] == turn[i]);                                                                                   \
            CHECK(ania::dump(back[i]) == ania::dump(turn[i]));                                                           \
        }                                                                                                                \
    }                                                                                                                    \
    TEMPLATE_LIST_TEST_CASE("history store: sessions are isolated and order is kept", "[store][conformance]", TypeList) { \
        ania::testing::store_fixture<TestType> fx;                                                                       \
        auto store = fx.make();                                                                                          \
        std::vector<ania::message> a, b;                                                                                 \
        for (int i = 0; i < 20; ++i) {                                                                                   \
            a.push_back(ania::message::user("a" + std::to_string(i)));                                                  \
            b.push_back(ania::message::user("b" + std::to_string(i)));                                                  \
            store->append("g:1", std::span(&a.back(), 1));                                                              \
            store->append(std::string("g:1\0x", 5), std::span(&b.back(), 1));                                          \
        }                                                                                                                \
        CHECK(store->load("g:1") == a);                                                                                  \
        CHECK(store->load(std::string("g:1\0x", 5)) == b);                                                              \
        CHECK(store->load("g:2").empty());                                                                               \
    }                                                                                                                    \
    TEMPLATE_LIST_TEST_CASE("history store: append after replace continues at n", "[store][conformance]", TypeList) {  \
        ania::testing::store_fixture<TestType> fx;                                                                       \
        auto store = fx.make();                                                                                          \
        store->append("s", ania::testing::sample_turn("1"));                                                            \
        store->append("s", ania::testing::sample_turn("2"));                                                            \
        const std::vector<ania::message> summary = {ania::message::user("以下是之前的对话摘要：\n摘要")};                   \
        store->replace("s", summary);                                                                                    \
        CHECK(store->load("s") == summary);                                                                              \
        const auto turn = ania::testing::sample_turn("3");                                                               \
        store->append("s", turn);                                                                                        \
        auto expect = summary;                                                                                           \
        expect.insert(expect.end(), turn.begin(), turn.end());                                                           \
        CHECK(store->load("s") == expect);                                                                               \
        store->replace("s", std::span<const ania::message>{});                                                          \
        CHECK(store->load("s").empty());                                                                                 \
    }                                                                                                                    \
    TEMPLATE_LIST_TEST_CASE("history store: clear and empty writes", "[store][conformance]", TypeList) {               \
        ania::testing::store_fixture<TestType> fx;                                                                       \
        auto store = fx.make();                                                                                          \
        store->clear("missing");                                                                                         \
        store->append("s", std::span<const ania::message>{});                                                            \
        CHECK(store->load("s").empty());                                                                                 \
        store->append("s", ania::testing::sample_turn("1"));                                                            \
        store->append("t", ania::testing::sample_turn("2"));                                                            \
        store->clear("s");                                                                                               \
        CHECK(store->load("s").empty());                                                                                 \
        CHECK(store->load("t").size() == 4);                                                                             \
    }                                                                                                                    \
    TEMPLATE_LIST_TEST_CASE("history store: drop_front keeps the suffix", "[store][conformance]", TypeList) {          \
        if constexpr (ania::testing::store_capabilities<TestType>::drops_prefix) {                                      \
            ania::testing::store_fixture<TestType> fx;                                                                   \
            auto store = fx.make();                                                                                      \
            auto t = ania::testing::sample_turn("1");                                                                    \
            const auto t2 = ania::testing::sample_turn("2");                                                             \
            t.insert(t.end(), t2.begin(), t2.end());                                                                     \
            store->append("s", t);                                                                                       \
            store->drop_front("s", 3);                                                                                   \
            CHECK(store->load("s") == std::vector<ania::message>(t.begin() + 3, t.end()));                              \
            store->append("s", t2);                                                                                      \
            CHECK(store->load("s").size() == 9);                                                                         \
            store->drop_front("s", 100);                                                                                 \
            CHECK(store->load("s").empty());                                                                             \
            /* every cut of 12 messages: fewer, as many and more remaining than dropped */                               \
            std::vector<ania::message> twelve = t;                                                                       \
            twelve.insert(twelve.end(), t2.begin(), t2.end());                                                           \
            for (std::size_t k = 1; k <= twelve.size(); ++k) {                                                           \
                const std::string id = "cut" + std::to_string(k);                                                        \
                store->append(id, twelve);                                                                               \
                store->drop_front(id, k);                                                                                \
                CHECK(store->load(id) == std::vector<ania::message>(twelve.begin() + static_cast<std::ptrdiff_t>(k), twelve.end())); \
                store->append(id, t2);                                                                                   \
                const auto after = store->load(id);                                                                      \
                REQUIRE(after.size() == twelve.size() - k + t2.size());                                                  \
                CHECK(std::vector<ania::message>(after.end() - static_cast<std::ptrdiff_t>(t2.size()), after.end()) == t2); \
            }                                                                                                            \
        }                                                                                                                \
    }                                                                                                                    \
    TEMPLATE_LIST_TEST_CASE("history store: what was written survives a reopen", "[store][conformance]", TypeList) {   \
        if constexpr (ania::testing::store_capabilities<TestType>::persists) {                                          \
            ania::testing::store_fixture<TestType> fx;                                                                   \
            std::vector<ania::message> want = ania::testing::sample_turn("1");                                           \
            {                                                                                                            \
                auto store = fx.make();                                                                                  \
                store->append("s", want);                                                                                \
                store->append("gone", want);                                                                             \
                store->clear("gone");                                                                                    \
                const auto more = ania::testing::sample_turn("2");                                                       \
                store->append("s", more);                                                                                \
                want.insert(want.end(), more.begin(), more.end());                                                       \
            }                                                                                                            \
            auto again = fx.reopen();                                                                                    \
            CHECK(again->load("s") == want);                                                                             \
            CHECK(again->load("gone").empty());                                                                          \
        }                                                                                                                \
    }                                                                                                                    \
    TEMPLATE_LIST_TEST_CASE("history store: threads appending at once lose and interleave nothing", "[store][conformance][threads]", TypeList) { \
        if constexpr (ania::testing::store_capabilities<TestType>::thread_safe) {                                       \
            ania::testing::store_fixture<TestType> fx;                                                                   \
            auto store = fx.make();                                                                                      \
            constexpr int threads = 4, turns = 25;                                                                       \
            std::vector<std::thread> pool;                                                                               \
            for (int t = 0; t < threads; ++t)                                                                            \
                pool.emplace_back([&store, t] {                                                                          \
                    for (int i = 0; i < turns; ++i) {                                                                    \
                        const std::vector<ania::message> two = {                                                        \
                            ania::message::user("t" + std::to_string(t) + ":" + std::to_string(i)),                     \
                            ania::message::assistant("r" + std::to_string(t) + ":" + std::to_string(i))};               \
                        store->append("shared", two);                                                                   \
                        store->append("own" + std::to_string(t), two);                                                 \
                    }                                                                                                    \
                });                                                                                                      \
            for (auto& th : pool) th.join();                                                                             \
            const auto shared = store->load("shared");                                                                   \
            REQUIRE(shared.size() == std::size_t{2 * threads * turns});                                                  \
            std::vector<int> next(threads, 0);                                                                           \
            for (std::size_t k = 0; k < shared.size(); k += 2) { /* each append whole, each thread in order */          \
                const std::string& u = shared[k].content;                                                                \
                const int t = u[1] - '0';                                                                                \
                REQUIRE((t >= 0 && t < threads));                                                                        \
                const std::string n = std::to_string(next[static_cast<std::size_t>(t)]++);                               \
                CHECK(u == "t" + std::to_string(t) + ":" + n);                                                           \
                CHECK(shared[k + 1].content == "r" + std::to_string(t) + ":" + n);                                      \
            }                                                                                                            \
            for (int t = 0; t < threads; ++t) CHECK(store->load("own" + std::to_string(t)).size() == std::size_t{2 * turns}); \
        }                                                                                                                \
    }
