// ania/compressor/truncate_oldest_half-inl.hpp -- the definitions of <ania/compressor/truncate_oldest_half.hpp>.
// Header-only mode includes this from there; compiled mode compiles it once, in the library (see
// <ania/detail/linkage.hpp>).
// SPDX-License-Identifier: MIT
#pragma once

#include <ania/detail/linkage.hpp>
#if !ANIA_HEADER_ONLY && !defined(ANIA_BUILDING_LIBRARY)
static_assert(false, "compiled mode: the library defines what <ania/compressor/truncate_oldest_half-inl.hpp> defines; include <ania/compressor/truncate_oldest_half.hpp>");
#endif

#include <ania/compressor/truncate_oldest_half.hpp>

namespace ania {

ANIA_INLINE auto truncate_oldest_half::cut(std::span<const message> h) noexcept -> std::size_t {
    const std::size_t n = h.size();
    if (n == 0) return 0;
    std::size_t start = n - std::max<std::size_t>(1, n / 2);
    while (start < n && h[start].role == role::tool) ++start;
    return start;
}

ANIA_INLINE auto truncate_oldest_half::compress(const compress_input& in) const -> compression_result {
    return compression_result::keep_suffix(cut(in.history));
}

} // namespace ania
