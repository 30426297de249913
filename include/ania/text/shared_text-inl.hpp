// ania/text/shared_text-inl.hpp -- the definitions of <ania/text/shared_text.hpp>.
// Header-only mode includes this from there; compiled mode compiles it once, in the library (see
// <ania/detail/linkage.hpp>).
// SPDX-License-Identifier: MIT
#pragma once

#include <ania/detail/linkage.hpp>
#if !ANIA_HEADER_ONLY && !defined(ANIA_BUILDING_LIBRARY)
static_assert(false, "compiled mode: the library defines what <ania/text/shared_text-inl.hpp> defines; include <ania/text/shared_text.hpp>");
#endif

#include <ania/text/shared_text.hpp>

namespace ania {

ANIA_INLINE shared_text::shared_text(std::string s)
    : own_(std::make_shared<const std::string>(std::move(s))), view_(*own_) {}

ANIA_INLINE shared_text::shared_text(std::string_view s)
    : shared_text(std::string(s)) {}

ANIA_INLINE shared_text::shared_text(const char* s)
    : shared_text(std::string(s)) {}

ANIA_INLINE auto shared_text::literal(std::string_view s) noexcept -> shared_text {
    shared_text t;
    t.view_ = s;
    return t;
}

} // namespace ania
