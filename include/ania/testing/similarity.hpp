// ania/testing/similarity.hpp -- the conformance kit of memory::similarity_policy.
// SPDX-License-Identifier: MIT
//
//     #include <ania/testing/similarity.hpp>
//     using policies = std::tuple<ania::memory::dice_similarity, my_policy>;
//     ANIA_TEST_SIMILARITY_POLICIES(policies)   // each made by `TestType{}`
#pragma once

#include <catch2/catch.hpp>

#include <cmath>
#include <cstddef>

#include <ania/memory/concepts.hpp>

/// Defines the conformance test cases over every policy type of the tuple `TypeList`.
#define ANIA_TEST_SIMILARITY_POLICIES(TypeList)                                                                         \
    TEMPLATE_LIST_TEST_CASE("similarity: a threshold in (0, 1] and finite positive weights", "[similarity][conformance]", TypeList) { \
        STATIC_REQUIRE(ania::memory::similarity_policy<TestType>);                                                       \
        const TestType p{};                                                                                              \
        CHECK(p.threshold > 0.0);                                                                                        \
        CHECK(p.threshold <= 1.0);                                                                                       \
        for (std::size_t n : {1u, 2u, 10u, 200u, 100000u})                                                             \
            for (std::size_t df = 0; df <= n; df += (n / 7 + 1)) {                                                       \
                const double w = p.weight(df, n);                                                                        \
                CHECK(std::isfinite(w));                                                                                 \
                CHECK(w > 0.0);                                                                                          \
                if (!TestType::weighted) CHECK(w == p.weight(0, 1)); /* unweighted: one weight */                       \
            }                                                                                                            \
    }                                                                                                                    \
    TEMPLATE_LIST_TEST_CASE("similarity: the same set is a duplicate, disjoint sets are not, order does not matter", "[similarity][conformance]", TypeList) { \
        const TestType p{};                                                                                              \
        for (const double w : {0.5, 1.0, 3.0, 40.0, 1e6}) {                                                              \
            INFO("weight " << w);                                                                                        \
            const double same = p.score(w, w, w, false);                                                                 \
            CHECK(same >= p.threshold);                                                                                  \
            CHECK(same <= 1.0 + 1e-12);                                                                                  \
            CHECK(p.score(0.0, w, w, false) < p.threshold);                                                              \
            CHECK(p.score(0.0, 0.0, 0.0, false) < p.threshold); /* two empty texts: not alike */                        \
            for (const double inter : {0.0, w / 4, w / 2, w}) {                                                          \
                const double s = p.score(inter, w, 2 * w, false);                                                        \
                CHECK(s == p.score(inter, 2 * w, w, false));                                                             \
                CHECK(s >= 0.0);                                                                                         \
                CHECK(p.score(inter, w, 2 * w, true) <= s); /* differing numbers never make texts more alike */          \
                if (inter > 0) CHECK(s >= p.score(inter / 2, w, 2 * w, false));                                          \
            }                                                                                                            \
        }                                                                                                                \
    }
