// ania/memory/ram_backend-inl.hpp -- the definitions of <ania/memory/ram_backend.hpp>.
// Header-only mode includes this from there; compiled mode compiles it once, in the library (see
// <ania/detail/linkage.hpp>).
// SPDX-License-Identifier: MIT
#pragma once

#include <ania/detail/linkage.hpp>
#if !ANIA_HEADER_ONLY && !defined(ANIA_BUILDING_LIBRARY)
static_assert(false, "compiled mode: the library defines what <ania/memory/ram_backend-inl.hpp> defines; include <ania/memory/ram_backend.hpp>");
#endif

#include <ania/memory/ram_backend.hpp>

namespace ania::memory {

ANIA_INLINE auto ram_backend::load(const scope& s) const -> std::vector<entry> {
    std::lock_guard lock(mutex_);
    const auto it = scopes_.find(s.str());
    if (it == scopes_.end()) return {};
    std::vector<entry> out = it->second;  // kept in order by insert; update may change created_at
    if (!std::is_sorted(out.begin(), out.end(), older)) std::stable_sort(out.begin(), out.end(), older);
    return out;
}

ANIA_INLINE auto ram_backend::scopes() const -> std::vector<std::string> {
    std::lock_guard lock(mutex_);
    std::vector<std::string> out;
    for (const auto& [k, v] : scopes_)
        if (!v.empty()) out.push_back(k);
    return out;
}

ANIA_INLINE auto ram_backend::insert(const scope& s, const entry& e) -> void {
    std::lock_guard lock(mutex_);
    auto& v = scopes_[s.str()];
    for (const entry& x : v)
        if (x.id == e.id) throw error(errc::store_error, "memory " + e.id + " already exists in " + s.str());
    v.insert(std::upper_bound(v.begin(), v.end(), e, older), e);
}

ANIA_INLINE auto ram_backend::update(const scope& s, const entry& e) -> void {
    std::lock_guard lock(mutex_);
    for (entry& x : scopes_[s.str()])
        if (x.id == e.id) {
            x = e;
            return;
        }
    throw error(errc::store_error, "memory " + e.id + " not found in " + s.str());
}

ANIA_INLINE auto ram_backend::erase(const scope& s, std::string_view id) -> void {
    std::lock_guard lock(mutex_);
    auto& v = scopes_[s.str()];
    std::erase_if(v, [&](const entry& x) { return x.id == id; });
}

ANIA_INLINE auto ram_backend::history(const scope& s, std::string_view id) const -> std::vector<memory_version> {
    std::lock_guard lock(mutex_);
    const auto sc = versions_.find(s.str());
    if (sc == versions_.end()) return {};
    const auto it = sc->second.find(id);
    return it == sc->second.end() ? std::vector<memory_version>{} : it->second;
}

// Each write and its version under one lock: nobody sees the one without the other.
ANIA_INLINE auto ram_backend::insert(const scope& s, const entry& e, const version_note& n) -> void {
    std::lock_guard lock(mutex_);
    auto& v = scopes_[s.str()];
    for (const entry& x : v)
        if (x.id == e.id) throw error(errc::store_error, "memory " + e.id + " already exists in " + s.str());
    auto& list = versions_[s.str()][e.id];
    list.reserve(list.size() + 2);  // the version cannot fail to be recorded after the row is in
    v.insert(std::upper_bound(v.begin(), v.end(), e, older), e);
    detail::record_version(list, n);
}

ANIA_INLINE auto ram_backend::update(const scope& s, const entry& e, const version_note& n) -> void {
    std::lock_guard lock(mutex_);
    for (entry& x : scopes_[s.str()])
        if (x.id == e.id) {
            auto& list = versions_[s.str()][e.id];
            list.reserve(list.size() + 2);
            x = e;
            detail::record_version(list, n);
            return;
        }
    throw error(errc::store_error, "memory " + e.id + " not found in " + s.str());
}

ANIA_INLINE auto ram_backend::erase(const scope& s, std::string_view id, const version_note& n) -> void {
    std::lock_guard lock(mutex_);
    auto& v = scopes_[s.str()];
    auto& list = versions_[s.str()][std::string(id)];
    list.reserve(list.size() + 2);
    if (std::erase_if(v, [&](const entry& x) { return x.id == id; }) > 0) detail::record_version(list, n);
}

ANIA_INLINE auto ram_backend::older(const entry& a, const entry& b) noexcept -> bool {
    return a.created_at != b.created_at ? a.created_at < b.created_at : a.id < b.id;
}

} // namespace ania::memory
