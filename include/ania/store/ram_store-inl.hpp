// ania/store/ram_store-inl.hpp -- the definitions of <ania/store/ram_store.hpp>.
// Header-only mode includes this from there; compiled mode compiles it once, in the library (see
// <ania/detail/linkage.hpp>).
// SPDX-License-Identifier: MIT
#pragma once

#include <ania/detail/linkage.hpp>
#if !ANIA_HEADER_ONLY && !defined(ANIA_BUILDING_LIBRARY)
static_assert(false, "compiled mode: the library defines what <ania/store/ram_store-inl.hpp> defines; include <ania/store/ram_store.hpp>");
#endif

#include <ania/store/ram_store.hpp>

namespace ania {

ANIA_INLINE auto ram_store::load(std::string_view session) const -> std::vector<message> {
    std::lock_guard lock(mutex_);
    const auto it = sessions_.find(session);
    return it == sessions_.end() ? std::vector<message>{} : it->second;
}

ANIA_INLINE auto ram_store::append(std::string_view session, std::span<const message> msgs) -> void {
    if (msgs.empty()) return;
    std::lock_guard lock(mutex_);
    auto& h = slot(session);
    h.insert(h.end(), msgs.begin(), msgs.end());
}

ANIA_INLINE auto ram_store::replace(std::string_view session, std::span<const message> msgs) -> void {
    std::lock_guard lock(mutex_);
    slot(session).assign(msgs.begin(), msgs.end());
}

ANIA_INLINE auto ram_store::clear(std::string_view session) -> void {
    std::lock_guard lock(mutex_);
    if (const auto it = sessions_.find(session); it != sessions_.end()) sessions_.erase(it);
}

ANIA_INLINE auto ram_store::drop_front(std::string_view session, std::size_t k) -> void {
    std::lock_guard lock(mutex_);
    const auto it = sessions_.find(session);
    if (it == sessions_.end()) return;
    auto& h = it->second;
    h.erase(h.begin(), h.begin() + static_cast<std::ptrdiff_t>(std::min(k, h.size())));
}

ANIA_INLINE auto ram_store::size() const -> std::size_t {
    std::lock_guard lock(mutex_);
    return sessions_.size();
}

ANIA_INLINE auto ram_store::slot(std::string_view session) -> std::vector<message>& {
    auto it = sessions_.find(session);
    if (it == sessions_.end()) it = sessions_.emplace(std::string(session), std::vector<message>{}).first;
    return it->second;
}

} // namespace ania
