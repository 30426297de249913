// ania/log-inl.hpp -- the definitions of <ania/log.hpp>.
// Header-only mode includes this from there; compiled mode compiles it once, in the library (see
// <ania/detail/linkage.hpp>).
// SPDX-License-Identifier: MIT
#pragma once

#include <ania/detail/linkage.hpp>
#if !ANIA_HEADER_ONLY && !defined(ANIA_BUILDING_LIBRARY)
static_assert(false, "compiled mode: the library defines what <ania/log-inl.hpp> defines; include <ania/log.hpp>");
#endif

#include <ania/log.hpp>

namespace ania {

ANIA_INLINE log_sink stderr_log_sink(log_level min) {
    return [min](log_level l, std::string_view text) {
        if (l < min) return;
        std::fprintf(stderr, "ania [%.*s] %.*s\n", static_cast<int>(to_string(l).size()), to_string(l).data(),
                     static_cast<int>(text.size()), text.data());
    };
}

ANIA_INLINE void log_to(const log_sink& sink, log_level l, std::string_view text) noexcept {
    if (!sink) return;
    try {
        sink(l, text);
    } catch (...) {
    }
}

} // namespace ania
