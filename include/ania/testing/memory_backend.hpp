// ania/testing/memory_backend.hpp -- the conformance kit of memory::memory_backend (and of the versioned one).
// SPDX-License-Identifier: MIT
//
//     #include <ania/testing/memory_backend.hpp>
//     template <> struct ania::testing::memory_backend_fixture<my_backend> {
//         std::unique_ptr<my_backend> make();    // a fresh, empty, enabled backend
//         std::unique_ptr<my_backend> reopen();  // optional: a second instance over the same data
//     };
//     using backends = std::tuple<ania::memory::ram_backend, my_backend>;
//     ANIA_TEST_MEMORY_BACKENDS(backends)
#pragma once

#include <catch2/catch.hpp>

#include <memory>
#include <string>
#include <vector>

#include <ania/memory/concepts.hpp>
#include <ania/memory/entry.hpp>
#include <ania/memory/scope.hpp>

namespace ania::testing {

template <class B>
struct memory_backend_fixture {
    std::unique_ptr<B> make() { return std::make_unique<B>(); }
};

/// An entry with every column set: CJK, emoji, tags, a vector, a fixed-width time.
inline memory::entry sample_entry(const std::string& id, int second) {
    memory::entry e;
    e.id = id;
    e.user_id = "qq:" + id;
    e.content = "小明喜欢 " + id + " 😀";
    e.tags = {"标签", "tag " + id};
    e.embedding = {0.25f, -1.5f, 3.0e-8f};
    e.created_at = "2026-01-01T00:00:" + std::string(second < 10 ? "0" : "") + std::to_string(second) + ".000000000Z";
    return e;
}

} // namespace ania::testing

/// Defines the conformance test cases over every backend type of the tuple `TypeList`.
#define ANIA_TEST_MEMORY_BACKENDS(TypeList)                                                                             \
    TEMPLATE_LIST_TEST_CASE("memory backend: rows come back whole, oldest first, per scope", "[memory][conformance]", TypeList) { \
        using ania::memory::scope;                                                                                       \
        ania::testing::memory_backend_fixture<TestType> fx;                                                              \
        auto b = fx.make();                                                                                              \
        REQUIRE(b->enabled());                                                                                           \
        const scope g = scope::from("g:1"), f = scope::from("f:1");                                                      \
        CHECK(b->load(g).empty());                                                                                       \
        CHECK(b->scopes().empty());                                                                                      \
        const auto late = ania::testing::sample_entry("0000000b", 9), early = ania::testing::sample_entry("0000000a", 1); \
        b->insert(g, late);                                                                                              \
        b->insert(g, early);                                                                                             \
        b->insert(f, ania::testing::sample_entry("0000000c", 5));                                                        \
        CHECK(b->load(g) == std::vector<ania::memory::entry>{early, late}); /* by created_at */                          \
        CHECK(b->load(f).size() == 1);                                                                                   \
        CHECK(b->scopes() == std::vector<std::string>{"f:1", "g:1"});                                                   \
        auto changed = early;                                                                                            \
        changed.content = "小明不喜欢了";                                                                                  \
        changed.tags.clear();                                                                                            \
        changed.embedding.clear();                                                                                       \
        b->update(g, changed);                                                                                           \
        CHECK(b->load(g) == std::vector<ania::memory::entry>{changed, late});                                            \
        b->erase(g, late.id);                                                                                            \
        b->erase(g, "missing");                                                                                          \
        CHECK(b->load(g) == std::vector<ania::memory::entry>{changed});                                                  \
        CHECK(b->load(f).size() == 1); /* another scope is untouched */                                                  \
        if constexpr (requires { fx.reopen(); }) {                                                                       \
            b.reset();                                                                                                   \
            auto again = fx.reopen();                                                                                    \
            CHECK(again->load(g) == std::vector<ania::memory::entry>{changed});                                          \
        }                                                                                                                \
    }                                                                                                                    \
    TEMPLATE_LIST_TEST_CASE("memory backend: versions move with every write, insert_if only at its version", "[memory][conformance]", TypeList) { \
        if constexpr (ania::memory::versioned_memory_backend<TestType>) {                                               \
            using ania::memory::scope;                                                                                   \
            ania::testing::memory_backend_fixture<TestType> fx;                                                          \
            auto b = fx.make();                                                                                          \
            const scope g = scope::from("g:2"), other = scope::from("g:3");                                              \
            const std::uint64_t v0 = b->version(g);                                                                      \
            const std::uint64_t v1 = b->insert(g, ania::testing::sample_entry("00000001", 1));                           \
            CHECK(v1 != v0);                                                                                             \
            CHECK(b->version(g) == v1);                                                                                  \
            CHECK(b->version(other) == b->version(other)); /* stable while nothing is written */                         \
            CHECK_FALSE(b->insert_if(g, ania::testing::sample_entry("00000002", 2), v0).has_value()); /* stale */        \
            CHECK(b->load(g).size() == 1);                                                                               \
            const auto v2 = b->insert_if(g, ania::testing::sample_entry("00000002", 2), v1);                             \
            REQUIRE(v2.has_value());                                                                                     \
            CHECK(*v2 != v1);                                                                                            \
            const std::uint64_t v3 = b->erase(g, "00000001");                                                            \
            CHECK(v3 != *v2);                                                                                            \
            CHECK(b->version(g) == v3);                                                                                  \
            CHECK(b->load(g).size() == 1);                                                                               \
        }                                                                                                                \
    }
