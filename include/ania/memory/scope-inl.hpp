// ania/memory/scope-inl.hpp -- the definitions of <ania/memory/scope.hpp>.
// Header-only mode includes this from there; compiled mode compiles it once, in the library (see
// <ania/detail/linkage.hpp>).
// SPDX-License-Identifier: MIT
#pragma once

#include <ania/detail/linkage.hpp>
#if !ANIA_HEADER_ONLY && !defined(ANIA_BUILDING_LIBRARY)
static_assert(false, "compiled mode: the library defines what <ania/memory/scope-inl.hpp> defines; include <ania/memory/scope.hpp>");
#endif

#include <ania/memory/scope.hpp>

namespace ania::memory {

ANIA_INLINE auto scope::parse(std::string_view text) -> std::optional<scope> {
    if (text.size() < 3 || (text[0] != 'g' && text[0] != 'f') || text[1] != ':' || text.size() > 66) return std::nullopt;
    for (std::size_t i = 2; i < text.size(); ++i)
        if (text[i] < '0' || text[i] > '9') return std::nullopt;
    return scope(std::string(text));
}

ANIA_INLINE auto scope::from(std::string_view text) -> scope {
    auto s = parse(text);
    if (!s) throw error(errc::invalid_argument, "invalid memory scope \"" + text::quote_for_message(text, 80) +
                                                    "\": expected g:<digits> or f:<digits>");
    return *s;
}

ANIA_INLINE scope::scope(std::string t)
    : text_(std::move(t)) {}

} // namespace ania::memory
