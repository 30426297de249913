// ania/memory/similarity-inl.hpp -- the definitions of <ania/memory/similarity.hpp>.
// Header-only mode includes this from there; compiled mode compiles it once, in the library (see
// <ania/detail/linkage.hpp>).
// SPDX-License-Identifier: MIT
#pragma once

#include <ania/detail/linkage.hpp>
#if !ANIA_HEADER_ONLY && !defined(ANIA_BUILDING_LIBRARY)
static_assert(false, "compiled mode: the library defines what <ania/memory/similarity-inl.hpp> defines; include <ania/memory/similarity.hpp>");
#endif

#include <ania/memory/similarity.hpp>

namespace ania::memory {

ANIA_INLINE auto idf_similarity::weight(std::size_t df, std::size_t n) noexcept -> double {
    const double idf = std::log((static_cast<double>(n) + 1.0) / (static_cast<double>(df) + 0.5));
    return idf * idf + 0.1;
}

ANIA_INLINE auto idf_similarity::score(double inter, double wa, double wb, bool numbers_differ) const noexcept -> double {
    const double d = wa + wb > 0 ? 2.0 * inter / (wa + wb) : 0.0;
    return numbers_differ ? d * numbers_differ_factor : d;
}

} // namespace ania::memory
