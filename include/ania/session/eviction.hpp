// ania/session/eviction.hpp -- which resident sessions a janitor tick evicts (SPEC §3): idle, LRU, both.
// SPDX-License-Identifier: MIT
#pragma once

#include <algorithm>
#include <chrono>
#include <concepts>
#include <cstddef>
#include <cstdint>
#include <span>
#include <string_view>
#include <tuple>
#include <vector>

#include <ania/detail/linkage.hpp>
#include <ania/concepts.hpp>
#include <ania/defaults.hpp>

namespace ania {

namespace detail {
/// `taken[i]` set for each session an earlier policy of a sequence chose (an out-of-range index, another
/// policy's bug, is not ours to trust).
ANIA_INLINE void mark_chosen(std::span<const eviction_choice> out, std::size_t sessions, std::vector<char>& taken);
} // namespace detail

/// SPEC §3 idle eviction: sessions idle for `max_idle` or longer (0 disables). Sessions already chosen by
/// an earlier policy of a sequence are not chosen again.
struct idle_eviction {
    std::int64_t max_idle_ns;
    explicit idle_eviction(const session_limits& l);
    void select(std::span<const resident_session> s, std::int64_t now, std::vector<eviction_choice>& out) const;
    /// Nothing is idle while the oldest activity is younger than max_idle.
    [[nodiscard]] bool may_select(std::size_t resident, std::int64_t oldest, std::int64_t now) const noexcept;
};

/// SPEC §3 LRU cap: with more than `max_sessions` resident (0 disables), the least recently active go until
/// `max_sessions` remain. O(n) (a selection, not a sort). Sessions already chosen by an earlier policy count
/// as gone. Not safe to call `select` on one object from two threads at once (its scratch is reused).
struct lru_eviction {
    std::size_t max_sessions;
    explicit lru_eviction(const session_limits& l);
    void select(std::span<const resident_session> s, std::int64_t, std::vector<eviction_choice>& out) const;
    [[nodiscard]] bool may_select(std::size_t resident, std::int64_t, std::int64_t) const noexcept;

private:
    // Reused between calls (a janitor tick calls select under its own lock: one call at a time per cache);
    // two 10k-session scratch vectors a tick would be large blocks for the allocator every pass.
    struct scratch {
        std::vector<char> taken;
        std::vector<std::size_t> left;
    };
    mutable scratch scratch_;
};

/// Policies applied in order, each seeing the choices of those before it.
template <eviction_policy... Ps>
struct eviction_sequence {
    std::tuple<Ps...> policies;
    explicit eviction_sequence(const session_limits& l) : policies(Ps(l)...) {}
    void select(std::span<const resident_session> s, std::int64_t now, std::vector<eviction_choice>& out) const {
        std::apply([&](const auto&... p) { (p.select(s, now, out), ...); }, policies);
    }
    /// Only when every member can prescreen: one that may select is enough to scan.
    [[nodiscard]] bool may_select(std::size_t resident, std::int64_t oldest, std::int64_t now) const
        requires(prescreening_eviction_policy<Ps> && ...)
    {
        return std::apply([&](const auto&... p) { return (p.may_select(resident, oldest, now) || ...); }, policies);
    }
};

/// The default, as the original: idle first, then the LRU cap over what is left.
using idle_then_lru = eviction_sequence<idle_eviction, lru_eviction>;

static_assert(prescreening_eviction_policy<idle_eviction> && prescreening_eviction_policy<lru_eviction> &&
              prescreening_eviction_policy<idle_then_lru>);

} // namespace ania

#if ANIA_HEADER_ONLY
#include <ania/session/eviction-inl.hpp>
#endif
