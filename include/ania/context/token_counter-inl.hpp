// ania/context/token_counter-inl.hpp -- the definitions of <ania/context/token_counter.hpp>.
// Header-only mode includes this from there; compiled mode compiles it once, in the library (see
// <ania/detail/linkage.hpp>).
// SPDX-License-Identifier: MIT
#pragma once

#include <ania/detail/linkage.hpp>
#if !ANIA_HEADER_ONLY && !defined(ANIA_BUILDING_LIBRARY)
static_assert(false, "compiled mode: the library defines what <ania/context/token_counter-inl.hpp> defines; include <ania/context/token_counter.hpp>");
#endif

#include <ania/context/token_counter.hpp>

namespace ania::detail {

ANIA_INLINE std::size_t count_runes_fast(std::string_view s) noexcept {
    return s.size() - count_continuation(reinterpret_cast<const unsigned char*>(s.data()), s.size());
}

} // namespace ania::detail

namespace ania {

ANIA_INLINE auto char_class_counter::twentieths(std::string_view s) noexcept -> std::int64_t {
    std::int64_t sum = 0;
    const auto* p = reinterpret_cast<const unsigned char*>(s.data());
    for (std::size_t i = 0; i < s.size(); ++i) {
        const unsigned char b = p[i];
        sum += detail::char_class_weights.weight[b];
        // Non-ASCII white space that CJK text uses: U+3000 (E3 80 80) and U+00A0 (C2 A0) weigh 0.1.
        if (b == 0xE3 && i + 2 < s.size() && p[i + 1] == 0x80 && p[i + 2] == 0x80) sum -= 18;
        else if (b == 0xC2 && i + 1 < s.size() && p[i + 1] == 0xA0) sum -= 18;
    }
    return sum;
}

ANIA_INLINE auto char_class_counter::count(const message& m) const noexcept -> std::int64_t {
    std::int64_t t20 = 0, images = 0;
    if (m.form == content_form::text) {
        t20 += twentieths(m.content);
    } else if (m.form == content_form::parts) {
        for (const content_part& p : m.parts) {
            if (p.type == content_part::kind::text) t20 += twentieths(p.text);
            else if (p.type == content_part::kind::image_url) ++images;
        }
    }
    if (m.reasoning_content) t20 += twentieths(*m.reasoning_content);
    for (const tool_call& c : m.tool_calls) t20 += twentieths(c.name) + twentieths(c.arguments) + 20 * per_tool_call;
    return per_message + (t20 + 19) / 20 + images * per_image;
}

ANIA_INLINE auto half_char_counter::count(const message& m) const noexcept -> std::int64_t {
    std::size_t runes = 0;
    std::int64_t images = 0;
    if (m.form == content_form::text) {
        runes += detail::count_runes_fast(m.content);
    } else if (m.form == content_form::parts) {
        for (const content_part& p : m.parts) {
            if (p.type == content_part::kind::text) runes += detail::count_runes_fast(p.text);
            else if (p.type == content_part::kind::image_url) ++images;
        }
    }
    if (m.reasoning_content) runes += detail::count_runes_fast(*m.reasoning_content);
    for (const tool_call& c : m.tool_calls) runes += detail::count_runes_fast(c.name) + detail::count_runes_fast(c.arguments);
    return per_message + static_cast<std::int64_t>(runes / 2) + images * per_image;
}

} // namespace ania
