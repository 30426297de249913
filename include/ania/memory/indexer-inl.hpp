// ania/memory/indexer-inl.hpp -- the definitions of <ania/memory/indexer.hpp>.
// Header-only mode includes this from there; compiled mode compiles it once, in the library (see
// <ania/detail/linkage.hpp>).
// SPDX-License-Identifier: MIT
#pragma once

#include <ania/detail/linkage.hpp>
#if !ANIA_HEADER_ONLY && !defined(ANIA_BUILDING_LIBRARY)
static_assert(false, "compiled mode: the library defines what <ania/memory/indexer-inl.hpp> defines; include <ania/memory/indexer.hpp>");
#endif

#include <ania/memory/indexer.hpp>

namespace ania::memory::detail {

ANIA_INLINE auto epoch_set::reserve(std::size_t n) -> void {
    if (stamp_.size() < n) stamp_.resize(std::max(n, stamp_.size() * 2), 0);
}

ANIA_INLINE auto epoch_set::insert(std::uint32_t id) -> bool {
    if (stamp_.size() <= id) reserve(std::size_t{id} + 1);
    if (stamp_[id] == epoch_) return false;
    stamp_[id] = epoch_;
    return true;
}

ANIA_INLINE auto epoch_set::clear() noexcept -> void {
    if (++epoch_ == 0) {
        std::fill(stamp_.begin(), stamp_.end(), 0);
        epoch_ = 1;
    }
}

ANIA_INLINE bool all_cjk(std::string_view t) noexcept {
    for (std::size_t pos = 0; pos < t.size();) {
        const auto r = text::decode_rune(t, pos);
        if (!r.valid || !is_cjk(r.value)) return false;
        pos += r.length;
    }
    return true;
}

} // namespace ania::memory::detail
