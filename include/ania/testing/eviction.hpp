// ania/testing/eviction.hpp -- the conformance kit of eviction_policy (and prescreening_eviction_policy):
// choices are indices of the snapshot, each once, with a reason; the same snapshot gives the same choices;
// disabled limits choose nothing; a prescreen never says "nothing" when select would choose.
// SPDX-License-Identifier: MIT
//
//     #include <ania/testing/eviction.hpp>
//     template <> struct ania::testing::eviction_capabilities<my_policy> {
//         static constexpr bool honours_disabled_limits = false;  // it evicts by a rule of its own
//     };
//     using policies = std::tuple<ania::idle_then_lru, my_policy>;
//     ANIA_TEST_EVICTION_POLICIES(policies)   // each made by `TestType(limits)`, as the session cache does
#pragma once

#include <catch2/catch.hpp>

#include <algorithm>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include <ania/concepts.hpp>

namespace ania::testing {

/// What the kit may expect of a policy beyond the concept. Specialise it for yours.
template <class P>
struct eviction_capabilities {
    /// Built from limits that disable both of SPEC §3's rules (max_idle 0, max_sessions 0), it chooses nothing.
    static constexpr bool honours_disabled_limits = true;
};

/// One random tick: a snapshot of resident sessions, the time, and limits.
struct eviction_case {
    std::vector<resident_session> sessions;  // keys: views of eviction_keys()
    std::int64_t now = 0;
    session_limits limits{};
};

/// The keys the cases' sessions view ("g:0", "g:1", ...), made once.
inline const std::vector<std::string>& eviction_keys() {
    static const std::vector<std::string> keys = [] {
        std::vector<std::string> k;
        for (int i = 0; i < 4000; ++i) k.push_back("g:" + std::to_string(i));
        return k;
    }();
    return keys;
}

/// Cases from `seed`: every size from none to thousands, activity spread over ~3 hours before `now` (some at
/// `now`, some exactly max_idle before it: the boundary), limits on and off, caps below and above the count.
inline std::vector<eviction_case> eviction_cases(std::uint64_t seed = 20261204) {
    using namespace std::chrono;
    std::mt19937_64 rng(seed);
    std::vector<eviction_case> out;
    const std::size_t sizes[] = {0, 1, 2, 3, 10, 127, 128, 129, 1000, 4000};
    const nanoseconds idles[] = {nanoseconds(0), nanoseconds(1), seconds(1), minutes(120)};
    const std::size_t caps[] = {0, 1, 5, 128, 1000};
    for (const std::size_t n : sizes)
        for (const nanoseconds idle : idles)
            for (const std::size_t cap : caps) {
                eviction_case c;
                c.limits = {idle, cap};
                c.now = std::int64_t{1} << 50;  // far from zero: differences never overflow
                const std::int64_t spread = duration_cast<nanoseconds>(hours(3)).count();
                for (std::size_t i = 0; i < n; ++i) {
                    std::int64_t at = c.now - static_cast<std::int64_t>(rng() % static_cast<std::uint64_t>(spread));
                    switch (rng() % 8) {
                    case 0: at = c.now; break;                  // active this very tick
                    case 1: at = c.now - idle.count(); break;   // exactly at the idle limit
                    case 2: at = c.now - idle.count() + 1; break;  // one nanosecond short of it
                    default: break;
                    }
                    c.sessions.push_back({eviction_keys()[i], at, static_cast<std::size_t>(rng() % 400), static_cast<std::size_t>(rng() % 100000)});
                }
                out.push_back(std::move(c));
            }
    return out;
}

/// What `p` chooses for `c`.
template <class P>
std::vector<eviction_choice> choose(const P& p, const eviction_case& c) {
    std::vector<eviction_choice> out;
    p.select(c.sessions, c.now, out);
    return out;
}

} // namespace ania::testing

/// Defines the conformance test cases over every policy type of the tuple `TypeList`.
#define ANIA_TEST_EVICTION_POLICIES(TypeList)                                                                          \
    TEMPLATE_LIST_TEST_CASE("eviction: choices are indices of the snapshot, each at most once, with a reason", "[eviction][conformance]", TypeList) { \
        STATIC_REQUIRE(ania::eviction_policy<TestType>);                                                                \
        for (const auto& c : ania::testing::eviction_cases()) {                                                         \
            INFO(c.sessions.size() << " resident, max_idle " << c.limits.max_idle.count() << " ns, max_sessions " << c.limits.max_sessions); \
            const TestType p(c.limits);                                                                                 \
            const auto chosen = ania::testing::choose(p, c);                                                           \
            std::vector<char> seen(c.sessions.size(), 0);                                                              \
            bool valid = true;                                                                                          \
            for (const auto& e : chosen) {                                                                              \
                if (e.index >= c.sessions.size() || seen[e.index]) { valid = false; break; }                            \
                seen[e.index] = 1;                                                                                      \
                if (e.why != ania::evict_reason::idle && e.why != ania::evict_reason::lru) valid = false;               \
            }                                                                                                           \
            CHECK(valid);                                                                                               \
            if (c.sessions.empty()) CHECK(chosen.empty());                                                              \
        }                                                                                                               \
    }                                                                                                                   \
    TEMPLATE_LIST_TEST_CASE("eviction: the same snapshot gives the same choices, also from a reused policy", "[eviction][conformance]", TypeList) { \
        for (const auto& c : ania::testing::eviction_cases()) {                                                         \
            const TestType p(c.limits);                                                                                 \
            const auto first = ania::testing::choose(p, c);                                                            \
            const auto again = ania::testing::choose(p, c);                                                            \
            const auto fresh = ania::testing::choose(TestType(c.limits), c);                                           \
            const auto same = [](const auto& a, const auto& b) {                                                        \
                return a.size() == b.size() && std::equal(a.begin(), a.end(), b.begin(), [](const auto& x, const auto& y) { \
                           return x.index == y.index && x.why == y.why;                                                 \
                       });                                                                                              \
            };                                                                                                          \
            CHECK(same(first, again));                                                                                  \
            CHECK(same(first, fresh));                                                                                  \
        }                                                                                                               \
    }                                                                                                                   \
    TEMPLATE_LIST_TEST_CASE("eviction: limits that disable both rules choose nothing", "[eviction][conformance]", TypeList) { \
        if constexpr (ania::testing::eviction_capabilities<TestType>::honours_disabled_limits) {                        \
            for (const auto& c : ania::testing::eviction_cases()) {                                                     \
                if (c.limits.max_idle.count() != 0 || c.limits.max_sessions != 0) continue;                             \
                INFO(c.sessions.size() << " resident");                                                                 \
                CHECK(ania::testing::choose(TestType(c.limits), c).empty());                                           \
            }                                                                                                           \
        }                                                                                                               \
    }                                                                                                                   \
    TEMPLATE_LIST_TEST_CASE("eviction: a prescreen never says nothing when select would choose", "[eviction][conformance]", TypeList) { \
        if constexpr (ania::prescreening_eviction_policy<TestType>) {                                                   \
            std::mt19937_64 rng(7);                                                                                     \
            for (const auto& c : ania::testing::eviction_cases()) {                                                     \
                const TestType p(c.limits);                                                                             \
                if (ania::testing::choose(p, c).empty()) continue;                                                     \
                std::int64_t oldest = c.sessions.front().last_active;                                                   \
                for (const auto& s : c.sessions) oldest = std::min(oldest, s.last_active);                              \
                INFO(c.sessions.size() << " resident, max_idle " << c.limits.max_idle.count() << " ns, max_sessions " \
                                       << c.limits.max_sessions << ", oldest " << (c.now - oldest) << " ns ago");      \
                /* the cache passes a lower bound of the oldest activity: the exact one, or older */                   \
                CHECK(p.may_select(c.sessions.size(), oldest, c.now));                                                  \
                CHECK(p.may_select(c.sessions.size(), oldest - static_cast<std::int64_t>(rng() % 1000000), c.now));    \
            }                                                                                                           \
        }                                                                                                               \
    }
