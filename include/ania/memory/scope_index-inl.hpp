// ania/memory/scope_index-inl.hpp -- the definitions of <ania/memory/scope_index.hpp>.
// Header-only mode includes this from there; compiled mode compiles it once, in the library (see
// <ania/detail/linkage.hpp>).
// SPDX-License-Identifier: MIT
#pragma once

#include <ania/detail/linkage.hpp>
#if !ANIA_HEADER_ONLY && !defined(ANIA_BUILDING_LIBRARY)
static_assert(false, "compiled mode: the library defines what <ania/memory/scope_index-inl.hpp> defines; include <ania/memory/scope_index.hpp>");
#endif

#include <ania/memory/scope_index.hpp>

namespace ania::memory::detail {

ANIA_INLINE auto scope_index::find(std::string_view id) const noexcept -> std::size_t {
    for (std::size_t i = 0; i < entries.size(); ++i)
        if (entries[i].id == id) return i;
    return npos;
}

ANIA_INLINE auto scope_index::push_back(entry e, indexed_entry x) -> void {
    idx.push_back(std::move(x));
    if (e.created_at > last_timestamp) last_timestamp = e.created_at;
    entries.push_back(std::move(e));
    postings_dirty = true;
}

ANIA_INLINE auto scope_index::assign(std::size_t i, entry e, indexed_entry x) -> void {
    entries[i] = std::move(e);
    idx[i] = std::move(x);
    postings_dirty = true;
}

ANIA_INLINE auto scope_index::erase(std::size_t i) -> void {
    entries.erase(entries.begin() + static_cast<std::ptrdiff_t>(i));
    idx.erase(idx.begin() + static_cast<std::ptrdiff_t>(i));
    postings_dirty = true;
}

} // namespace ania::memory::detail
