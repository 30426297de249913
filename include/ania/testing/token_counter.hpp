// ania/testing/token_counter.hpp -- the conformance kit of token_counter.
// SPDX-License-Identifier: MIT
//
//     #include <ania/testing/token_counter.hpp>
//     using counters = std::tuple<ania::char_class_counter, my_counter>;
//     ANIA_TEST_TOKEN_COUNTERS(counters)   // each made by `TestType{}`
#pragma once

#include <catch2/catch.hpp>

#include <cstdint>
#include <string>
#include <vector>

#include <ania/concepts.hpp>
#include <ania/message.hpp>

namespace ania::testing {

/// Messages of every shape a window holds.
inline std::vector<message> counter_samples() {
    std::vector<message> v = {message::user(""), message::user("hello"), message::user("小明喜欢喝咖啡 😀"),
                              message::assistant(std::string(5000, 'x')), message::system("你是一个助手"),
                              message::tool_result("c1", R"({"hits":[]})")};
    v.push_back(message::assistant_calls({{"c1", "function", "memory_search", R"({"query":"小明"})", {}, {}}}));
    message img = message::user("");
    img.form = content_form::parts;
    img.parts = {content_part::make_text("看图"), content_part::make_image("data:image/png;base64,AAAA")};
    v.push_back(std::move(img));
    message r = message::assistant("ok");
    r.reasoning_content = std::string(300, 'r');
    v.push_back(std::move(r));
    return v;
}

} // namespace ania::testing

/// Defines the conformance test cases over every counter type of the tuple `TypeList`.
#define ANIA_TEST_TOKEN_COUNTERS(TypeList)                                                                              \
    TEMPLATE_LIST_TEST_CASE("token counter: non-negative, pure, noexcept", "[counter][conformance]", TypeList) {      \
        STATIC_REQUIRE(ania::token_counter<TestType>);                                                                   \
        const TestType c{};                                                                                              \
        for (const ania::message& m : ania::testing::counter_samples()) {                                               \
            const std::int64_t n = c.count(m);                                                                           \
            CHECK(n >= 0);                                                                                               \
            const ania::message copy = m;                                                                                \
            CHECK(c.count(copy) == n);                                                                                   \
        }                                                                                                                \
    }                                                                                                                    \
    TEMPLATE_LIST_TEST_CASE("token counter: more text never counts less", "[counter][conformance]", TypeList) {       \
        const TestType c{};                                                                                              \
        for (const std::string piece : {"a", "word ", "中文", "😀", "\n"}) {                                             \
            ania::message m = ania::message::user("");                                                                   \
            std::int64_t last = c.count(m);                                                                              \
            for (int i = 0; i < 200; ++i) {                                                                              \
                m.content += piece;                                                                                      \
                const std::int64_t n = c.count(m);                                                                       \
                CHECK(n >= last);                                                                                        \
                last = n;                                                                                                \
            }                                                                                                            \
            CHECK(last > c.count(ania::message::user(""))); /* 200 pieces are not free */                               \
        }                                                                                                                \
    }
