// tests/conformance/history_store.hpp -- what every history_store must do, written once.
// A store type joins by specialising ania_test::store_fixture<S> (make() returns a fresh, empty store).
#pragma once

#include <catch2/catch.hpp>

#include <memory>
#include <string>
#include <vector>

#include <ania/concepts.hpp>
#include <ania/json.hpp>
#include <ania/message.hpp>

namespace ania_test {

template <class S>
struct store_fixture;  // { std::unique_ptr<S> make(); }

inline std::vector<ania::message> sample_turn(const std::string& tag) {
    using namespace std::string_literals;
    ania::message calls = ania::message::assistant_calls({{"call_" + tag, "function", "memory_search", R"({"query":"小明"})", {}, {}}});
    calls.reasoning_content = "先查一下记忆 🤔";
    return {ania::message::user("[nickname:小明 id:qq:1] 你好 " + tag + " 😀 nul\0inside"s), std::move(calls),
            ania::message::tool_result("call_" + tag, R"({"hits":[]})"), ania::message::assistant("记住了 ✅ " + tag)};
}

} // namespace ania_test

#define ANIA_HISTORY_STORE_CONFORMANCE(...)                                                                          \
    TEMPLATE_TEST_CASE("history store: round trip is byte-identical", "[store][conformance]", __VA_ARGS__) {         \
        ania_test::store_fixture<TestType> fx;                                                                        \
        auto store = fx.make();                                                                                       \
        const auto turn = ania_test::sample_turn("1");                                                                \
        store->append("s", turn);                                                                                     \
        const auto back = store->load("s");                                                                           \
        REQUIRE(back.size() == turn.size());                                                                          \
        for (std::size_t i = 0; i < turn.size(); ++i) {                                                              \
            CHECK(back[i] == turn[i]);                                                                                \
            CHECK(ania::dump(back[i]) == ania::dump(turn[i]));                                                        \
        }                                                                                                             \
    }                                                                                                                 \
    TEMPLATE_TEST_CASE("history store: sessions are isolated and order is kept", "[store][conformance]", __VA_ARGS__) { \
        ania_test::store_fixture<TestType> fx;                                                                        \
        auto store = fx.make();                                                                                       \
        std::vector<ania::message> a, b;                                                                              \
        for (int i = 0; i < 20; ++i) {                                                                                \
            a.push_back(ania::message::user("a" + std::to_string(i)));                                               \
            b.push_back(ania::message::user("b" + std::to_string(i)));                                               \
            store->append("g:1", std::span(&a.back(), 1));                                                           \
            store->append(std::string("g:1\0x", 5), std::span(&b.back(), 1));                                       \
        }                                                                                                             \
        CHECK(store->load("g:1") == a);                                                                               \
        CHECK(store->load(std::string("g:1\0x", 5)) == b);                                                           \
        CHECK(store->load("g:2").empty());                                                                            \
    }                                                                                                                 \
    TEMPLATE_TEST_CASE("history store: append after replace continues at n", "[store][conformance]", __VA_ARGS__) {  \
        ania_test::store_fixture<TestType> fx;                                                                        \
        auto store = fx.make();                                                                                       \
        store->append("s", ania_test::sample_turn("1"));                                                             \
        store->append("s", ania_test::sample_turn("2"));                                                             \
        const std::vector<ania::message> summary = {ania::message::user("以下是之前的对话摘要：\n摘要")};                \
        store->replace("s", summary);                                                                                 \
        CHECK(store->load("s") == summary);                                                                           \
        const auto turn = ania_test::sample_turn("3");                                                                \
        store->append("s", turn);                                                                                     \
        auto expect = summary;                                                                                        \
        expect.insert(expect.end(), turn.begin(), turn.end());                                                        \
        CHECK(store->load("s") == expect);                                                                            \
        store->replace("s", {});                                                                                      \
        CHECK(store->load("s").empty());                                                                              \
    }                                                                                                                 \
    TEMPLATE_TEST_CASE("history store: clear and empty writes", "[store][conformance]", __VA_ARGS__) {               \
        ania_test::store_fixture<TestType> fx;                                                                        \
        auto store = fx.make();                                                                                       \
        store->clear("missing");                                                                                      \
        store->append("s", std::span<const ania::message>{});                                                         \
        CHECK(store->load("s").empty());                                                                              \
        store->append("s", ania_test::sample_turn("1"));                                                             \
        store->append("t", ania_test::sample_turn("2"));                                                             \
        store->clear("s");                                                                                            \
        CHECK(store->load("s").empty());                                                                              \
        CHECK(store->load("t").size() == 4);                                                                          \
    }                                                                                                                 \
    TEMPLATE_TEST_CASE("history store: drop_front keeps the suffix", "[store][conformance]", __VA_ARGS__) {          \
        ania_test::store_fixture<TestType> fx;                                                                        \
        auto store = fx.make();                                                                                       \
        if constexpr (ania::prefix_dropping_store<TestType>) {                                                       \
            auto t = ania_test::sample_turn("1");                                                                     \
            const auto t2 = ania_test::sample_turn("2");                                                              \
            t.insert(t.end(), t2.begin(), t2.end());                                                                  \
            store->append("s", t);                                                                                    \
            store->drop_front("s", 3);                                                                                \
            CHECK(store->load("s") == std::vector<ania::message>(t.begin() + 3, t.end()));                           \
            store->append("s", t2);                                                                                   \
            CHECK(store->load("s").size() == 9);                                                                      \
            store->drop_front("s", 100);                                                                              \
            CHECK(store->load("s").empty());                                                                          \
            /* every cut of 12 messages: fewer, as many and more remaining than dropped */                            \
            std::vector<ania::message> twelve = t;                                                                    \
            twelve.insert(twelve.end(), t2.begin(), t2.end());                                                        \
            for (std::size_t k = 1; k <= twelve.size(); ++k) {                                                        \
                const std::string id = "cut" + std::to_string(k);                                                     \
                store->append(id, twelve);                                                                            \
                store->drop_front(id, k);                                                                             \
                CHECK(store->load(id) == std::vector<ania::message>(twelve.begin() + static_cast<std::ptrdiff_t>(k), twelve.end())); \
                store->append(id, t2);                                                                                \
                const auto after = store->load(id);                                                                   \
                REQUIRE(after.size() == twelve.size() - k + t2.size());                                               \
                CHECK(std::vector<ania::message>(after.end() - static_cast<std::ptrdiff_t>(t2.size()), after.end()) == t2); \
            }                                                                                                         \
        }                                                                                                             \
    }
