// ania/text/unicode.hpp -- the Unicode properties ania needs: simple lower-casing, letters and digits.
// SPDX-License-Identifier: MIT
//
// ASCII is answered inline, the BMP by one two-stage bit look-up, the rest by binary search, all from tables
// generated from ICU (text/unicode_tables.hpp, see
// scripts/gen_unicode_tables.sh). tests/unit/unicode.cpp checks every code point against ICU.
#pragma once

#include <cstddef>
#include <cstdint>
#include <iterator>

#include <ania/text/unicode_tables.hpp>

namespace ania::text {

namespace detail {
[[nodiscard]] constexpr bool bmp_bit(const std::uint8_t (&index)[256], const std::uint32_t (*blocks)[8], char32_t c) noexcept {
    return (blocks[index[c >> 8]][(c >> 5) & 7] >> (c & 31)) & 1u;
}
} // namespace detail

/// Unicode's simple lower-case mapping (UnicodeData.txt field 13, as Go's unicode.ToLower and ICU's
/// u_tolower): one code point to one code point, no locale. Idempotent. The UTF-8 length may change
/// (U+023A 'Ⱥ' -> U+2C65, U+1E9E 'ẞ' -> U+00DF, U+212A KELVIN SIGN -> 'k').
[[nodiscard]] constexpr char32_t to_lower(char32_t c) noexcept {
    if (c < 0x80) return (c >= 'A' && c <= 'Z') ? c + 32 : c;
    if (c < 0x10000 && !detail::bmp_bit(detail::lower_bmp_index, detail::lower_bmp_blocks, c)) return c;
    const auto& runs = detail::lower_runs;
    std::size_t lo = 0, hi = std::size(runs);  // the first run whose last >= c
    while (lo < hi) {
        const std::size_t mid = (lo + hi) / 2;
        if (runs[mid].last < c) lo = mid + 1;
        else hi = mid;
    }
    if (lo == std::size(runs) || runs[lo].first > c || (c - runs[lo].first) % runs[lo].stride != 0) return c;
    return static_cast<char32_t>(static_cast<std::int64_t>(c) + runs[lo].delta);
}

/// CJK: kana, CJK ideographs (with extension A and the compatibility block), Hangul syllables, and the
/// supplementary ideograph planes (memory's tokenizer, the summary's script check).
[[nodiscard]] constexpr bool is_cjk(char32_t c) noexcept {
    return (c >= 0x3040 && c <= 0x30FF) || (c >= 0x3400 && c <= 0x4DBF) || (c >= 0x4E00 && c <= 0x9FFF) ||
           (c >= 0xAC00 && c <= 0xD7AF) || (c >= 0xF900 && c <= 0xFAFF) || (c >= 0x20000 && c <= 0x2FA1F);
}

/// A letter (general category L*) or a decimal digit (Nd): what the spec's tokenizer calls a word rune.
[[nodiscard]] constexpr bool is_letter_or_digit(char32_t c) noexcept {
    if (c < 0x80) return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9');
    if (c < 0x10000) return detail::bmp_bit(detail::word_bmp_index, detail::word_bmp_blocks, c);
    const auto& ranges = detail::word_ranges;
    std::size_t lo = 0, hi = std::size(ranges);  // the first range whose last >= c
    while (lo < hi) {
        const std::size_t mid = (lo + hi) / 2;
        if (ranges[mid][1] < c) lo = mid + 1;
        else hi = mid;
    }
    return lo < std::size(ranges) && ranges[lo][0] <= c;
}

} // namespace ania::text
