// ania/session/eviction-inl.hpp -- the definitions of <ania/session/eviction.hpp>.
// Header-only mode includes this from there; compiled mode compiles it once, in the library (see
// <ania/detail/linkage.hpp>).
// SPDX-License-Identifier: MIT
#pragma once

#include <ania/detail/linkage.hpp>
#if !ANIA_HEADER_ONLY && !defined(ANIA_BUILDING_LIBRARY)
static_assert(false, "compiled mode: the library defines what <ania/session/eviction-inl.hpp> defines; include <ania/session/eviction.hpp>");
#endif

#include <ania/session/eviction.hpp>

namespace ania::detail {

ANIA_INLINE void mark_chosen(std::span<const eviction_choice> out, std::size_t sessions, std::vector<char>& taken) {
    taken.assign(sessions, 0);
    for (const eviction_choice& c : out)
        if (c.index < sessions) taken[c.index] = 1;
}

} // namespace ania::detail

namespace ania {

ANIA_INLINE idle_eviction::idle_eviction(const session_limits& l)
    : max_idle_ns(l.max_idle.count()) {}

ANIA_INLINE auto idle_eviction::select(std::span<const resident_session> s, std::int64_t now,
                                       std::vector<eviction_choice>& out) const -> void {
    if (max_idle_ns <= 0) return;
    if (out.empty()) {  // first (the default sequence): nothing to skip
        for (std::size_t i = 0; i < s.size(); ++i)
            if (now - s[i].last_active >= max_idle_ns) out.push_back({i, evict_reason::idle});
        return;
    }
    std::vector<char> taken;
    detail::mark_chosen(out, s.size(), taken);
    for (std::size_t i = 0; i < s.size(); ++i)
        if (!taken[i] && now - s[i].last_active >= max_idle_ns) out.push_back({i, evict_reason::idle});
}

ANIA_INLINE auto idle_eviction::may_select(std::size_t resident, std::int64_t oldest, std::int64_t now) const noexcept -> bool {
    return max_idle_ns > 0 && resident > 0 && now - oldest >= max_idle_ns;
}

ANIA_INLINE lru_eviction::lru_eviction(const session_limits& l)
    : max_sessions(l.max_sessions) {}

ANIA_INLINE auto lru_eviction::select(std::span<const resident_session> s, std::int64_t,
                                      std::vector<eviction_choice>& out) const -> void {
    if (max_sessions == 0) return;
    std::vector<char>& taken = scratch_.taken;
    detail::mark_chosen(out, s.size(), taken);
    std::vector<std::size_t>& left = scratch_.left;
    left.clear();
    for (std::size_t i = 0; i < s.size(); ++i)
        if (!taken[i]) left.push_back(i);
    if (left.size() <= max_sessions) return;
    const std::size_t excess = left.size() - max_sessions;
    const auto older = [&](std::size_t a, std::size_t b) { return s[a].last_active < s[b].last_active; };
    std::nth_element(left.begin(), left.begin() + static_cast<std::ptrdiff_t>(excess - 1), left.end(), older);
    for (std::size_t k = 0; k < excess; ++k) out.push_back({left[k], evict_reason::lru});
}

ANIA_INLINE auto lru_eviction::may_select(std::size_t resident, std::int64_t, std::int64_t) const noexcept -> bool {
    return max_sessions > 0 && resident > max_sessions;
}

} // namespace ania
