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
/// instance over what the last make() stored, as after a restart. An archiving_store's fixture also has
/// `make_archiving(archive_options)`: a fresh, empty store whose archive is bounded so.
template <class S>
struct store_fixture {
    std::unique_ptr<S> make() { return std::make_unique<S>(); }
    std::unique_ptr<S> make_archiving(const archive_options& a)
        requires archiving_store<S>
    {
        return std::make_unique<S>(a);
    }
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

/// n distinct messages of every shape (user, assistant with calls, tool result), tagged `tag`, valid as a
/// transcript when n is a multiple of 4.
inline std::vector<message> archive_sample(const std::string& tag, std::size_t n) {
    std::vector<message> out;
    for (std::size_t i = 0; out.size() < n; ++i) {
        auto t = sample_turn(tag + "-" + std::to_string(i));
        for (message& m : t)
            if (out.size() < n) out.push_back(std::move(m));
    }
    return out;
}

inline archive_batch archive_of(std::vector<message> msgs, std::string summary, std::string at = "2026-12-05T20:00:00.000000000Z") {
    return archive_batch{std::move(msgs), std::move(summary), std::move(at)};
}

/// The archived messages of a read, without their numbers.
inline std::vector<message> messages_of(const archive_slice& s) {
    std::vector<message> out;
    for (const archived_message& m : s.messages) out.push_back(m.msg);
    return out;
}

/// The archive conformance cases (run by ANIA_TEST_HISTORY_STORES for an archiving_store).
template <class S, class Fixture>
void check_archiving_store(Fixture& fx) {
    SECTION("replace_archiving and drop_front_archiving: the history and its archive, numbered on") {
        auto store = fx.make_archiving({});
        const auto h = archive_sample("a", 12);
        store->append("s", h);
        const std::vector<message> summary = {message::user("以下是之前的对话摘要：\n摘要")};
        std::vector<message> kept = summary;
        kept.insert(kept.end(), h.begin() + 8, h.end());
        store->replace_archiving("s", kept, archive_of({h.begin(), h.begin() + 8}, "摘要", "2026-12-05T20:00:00.000000000Z"));
        CHECK(store->load("s") == kept);
        archive_slice a = store->read_archive("s", 0, whole_archive);
        CHECK(a.first_seq == 0);
        CHECK(a.next_seq == 8);
        REQUIRE(a.messages.size() == 8);
        for (std::size_t i = 0; i < 8; ++i) {
            CHECK(a.messages[i].seq == static_cast<std::int64_t>(i));
            CHECK(a.messages[i].archived_at == "2026-12-05T20:00:00.000000000Z");
            CHECK(dump(a.messages[i].msg) == dump(h[i]));  // byte for byte: CJK, emoji, NUL, calls, reasoning
        }
        REQUIRE(a.summaries.size() == 1);
        CHECK(a.summaries[0] == archive_summary{0, 8, "摘要", "2026-12-05T20:00:00.000000000Z"});
        // A cut of the first two (the summary and the next): archived after, numbered 8 and 9.
        store->drop_front_archiving("s", 2, archive_of({kept.begin(), kept.begin() + 2}, "", "2026-12-05T21:00:00.000000000Z"));
        CHECK(store->load("s") == std::vector<message>(kept.begin() + 2, kept.end()));
        a = store->read_archive("s", 8, whole_archive);
        CHECK(messages_of(a) == std::vector<message>(kept.begin(), kept.begin() + 2));
        CHECK(a.messages.front().seq == 8);
        CHECK(a.next_seq == 10);
        REQUIRE(a.summaries.size() == 1);
        CHECK(a.summaries[0] == archive_summary{8, 2, "", "2026-12-05T21:00:00.000000000Z"});
        // Any range: clipped to what exists; summaries of the batches it touches.
        a = store->read_archive("s", 6, 3);
        REQUIRE(a.messages.size() == 3);
        CHECK(a.messages[0].seq == 6);
        CHECK(a.messages[2].seq == 8);
        CHECK(a.summaries.size() == 2);
        CHECK(store->read_archive("s", 10, 5).messages.empty());
        CHECK(store->read_archive("s", -5, 1).messages.at(0).seq == 0);
        CHECK(store->read_archive("s", 0, 0).messages.empty());
        // An empty batch archives nothing (and still replaces).
        store->replace_archiving("s", summary, archive_of({}, "x"));
        CHECK(store->load("s") == summary);
        CHECK(store->read_archive("s", 0, whole_archive).next_seq == 10);
    }
    SECTION("archives are per session; clear forgets it, numbers are never reused") {
        auto store = fx.make_archiving({});
        const std::string other("g:1\0x", 5);
        const auto h = archive_sample("b", 8);
        store->append("g:1", h);
        store->append(other, h);
        store->replace_archiving("g:1", std::span<const message>{}, archive_of(h, "one"));
        store->drop_front_archiving(other, 4, archive_of({h.begin(), h.begin() + 4}, "two"));
        CHECK(messages_of(store->read_archive("g:1", 0, whole_archive)) == h);
        CHECK(messages_of(store->read_archive(other, 0, whole_archive)) == std::vector<message>(h.begin(), h.begin() + 4));
        CHECK(store->read_archive("g:2", 0, whole_archive).next_seq == 0);
        store->clear("g:1");
        archive_slice a = store->read_archive("g:1", 0, whole_archive);
        CHECK(a.messages.empty());
        CHECK(a.summaries.empty());
        CHECK(a.first_seq == 8);
        CHECK(a.next_seq == 8);
        CHECK(store->read_archive(other, 0, whole_archive).messages.size() == 4);  // untouched
        store->append("g:1", h);
        store->replace_archiving("g:1", std::span<const message>{}, archive_of({h.begin(), h.begin() + 2}, ""));
        a = store->read_archive("g:1", 0, whole_archive);
        REQUIRE(a.messages.size() == 2);
        CHECK(a.messages[0].seq == 8);
        store->clear_archive(other);
        CHECK(store->read_archive(other, 0, whole_archive).messages.empty());
        CHECK(store->load(other) == std::vector<message>(h.begin() + 4, h.end()));  // the history stays
    }
    SECTION("keep_on_clear keeps the archive through a clear") {
        auto store = fx.make_archiving({.keep_on_clear = true});
        const auto h = archive_sample("c", 4);
        store->append("s", h);
        store->replace_archiving("s", std::span<const message>{}, archive_of(h, ""));
        store->clear("s");
        CHECK(store->load("s").empty());
        CHECK(messages_of(store->read_archive("s", 0, whole_archive)) == h);
    }
    SECTION("the caps drop the oldest first, and say so in first_seq") {
        const auto h = archive_sample("d", 20);
        auto store = fx.make_archiving({.max_messages = 7});
        for (std::size_t b = 0; b < 5; ++b)
            store->replace_archiving("s", std::span<const message>{}, archive_of({h.begin() + 4 * b, h.begin() + 4 * b + 4}, "s" + std::to_string(b)));
        archive_slice a = store->read_archive("s", 0, whole_archive);
        CHECK(a.first_seq == 13);
        CHECK(a.next_seq == 20);
        CHECK(messages_of(a) == std::vector<message>(h.begin() + 13, h.end()));
        REQUIRE(a.summaries.size() == 2);  // batches 3 (partly kept) and 4
        CHECK(a.summaries[0].summary == "s3");
        // Bytes: the newest that fit, computed from the messages themselves.
        std::size_t budget = 0;
        for (std::size_t i = 14; i < 20; ++i) budget += archived_bytes(h[i]);
        auto by_bytes = fx.make_archiving({.max_messages = 0, .max_bytes = budget});
        for (std::size_t b = 0; b < 5; ++b)
            by_bytes->replace_archiving("s", std::span<const message>{}, archive_of({h.begin() + 4 * b, h.begin() + 4 * b + 4}, ""));
        a = by_bytes->read_archive("s", 0, whole_archive);
        CHECK(a.first_seq == 14);
        CHECK(messages_of(a) == std::vector<message>(h.begin() + 14, h.end()));
        // One message over the byte cap alone: kept (the newest always stays).
        auto tiny = fx.make_archiving({.max_bytes = 1});
        tiny->replace_archiving("s", std::span<const message>{}, archive_of({h.begin(), h.begin() + 3}, ""));
        a = tiny->read_archive("s", 0, whole_archive);
        CHECK(a.first_seq == 2);
        CHECK(messages_of(a) == std::vector<message>{h[2]});
    }
}

} // namespace ania::testing

/// Defines the conformance test cases over every store type of the tuple `TypeList`.
#define ANIA_TEST_HISTORY_STORES(TypeList)                                                                               \
    TEMPLATE_LIST_TEST_CASE("history store: the archive of an archiving store", "[store][conformance][archive]", TypeList) { \
        if constexpr (ania::archiving_store<TestType>) {                                                                 \
            ania::testing::store_fixture<TestType> fx;                                                                   \
            ania::testing::check_archiving_store<TestType>(fx);                                                          \
        }                                                                                                                \
    }                                                                                                                    \
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
