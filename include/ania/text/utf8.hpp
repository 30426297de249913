// ania/text/utf8.hpp -- UTF-8 validation, repair to U+FFFD, rune counting and rune-safe truncation.
// SPDX-License-Identifier: MIT
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string>
#include <string_view>

#include <ania/detail/simd.hpp>

namespace ania::text {

/// One decoded code point. `length` is the number of bytes consumed (>= 1); when `valid` is false they are
/// the maximal ill-formed subpart (Unicode 15, §3.9 "U+FFFD substitution of maximal subparts"), which a
/// repair replaces by one U+FFFD.
struct decoded_rune {
    char32_t value;
    std::uint8_t length;
    bool valid;
};

inline constexpr char32_t replacement_character = U'\uFFFD';

/// Decodes the code point that starts at s[pos] (pos < s.size()).
[[nodiscard]] constexpr decoded_rune decode_rune(std::string_view s, std::size_t pos) noexcept {
    const auto byte = [&](std::size_t i) { return static_cast<unsigned char>(s[i]); };
    const unsigned char b0 = byte(pos);
    if (b0 < 0x80) return {b0, 1, true};
    std::size_t need = 0;
    unsigned char lo = 0x80, hi = 0xBF;  // range of the second byte (Table 3-7)
    char32_t cp = 0;
    if (b0 >= 0xC2 && b0 <= 0xDF) { need = 1; cp = b0 & 0x1F; }
    else if (b0 >= 0xE0 && b0 <= 0xEF) {
        need = 2; cp = b0 & 0x0F;
        if (b0 == 0xE0) lo = 0xA0;
        if (b0 == 0xED) hi = 0x9F;  // no surrogates
    } else if (b0 >= 0xF0 && b0 <= 0xF4) {
        need = 3; cp = b0 & 0x07;
        if (b0 == 0xF0) lo = 0x90;
        if (b0 == 0xF4) hi = 0x8F;  // <= U+10FFFF
    } else {
        return {replacement_character, 1, false};
    }
    std::uint8_t used = 1;
    for (std::size_t k = 0; k < need; ++k) {
        const std::size_t i = pos + 1 + k;
        if (i >= s.size()) return {replacement_character, used, false};
        const unsigned char b = byte(i);
        const unsigned char l = k == 0 ? lo : 0x80, h = k == 0 ? hi : 0xBF;
        if (b < l || b > h) return {replacement_character, used, false};
        cp = (cp << 6) | (b & 0x3F);
        ++used;
    }
    return {cp, used, true};
}

namespace detail {
/// Length of the leading run of ASCII bytes, eight at a time.
[[nodiscard]] inline std::size_t ascii_prefix(std::string_view s, std::size_t pos) noexcept {
    const std::size_t n = s.size();
    while (pos + 8 <= n) {
        std::uint64_t w;
        std::memcpy(&w, s.data() + pos, 8);
        if (w & 0x8080808080808080ULL) break;
        pos += 8;
    }
    while (pos < n && static_cast<unsigned char>(s[pos]) < 0x80) ++pos;
    return pos;
}
} // namespace detail

/// Byte offset of the first ill-formed sequence, or std::string_view::npos when `s` is valid UTF-8.
[[nodiscard]] inline std::size_t find_invalid_utf8(std::string_view s) noexcept {
    // decode_rune's rules, without building the code point: this runs over every string a request sends.
    const std::size_t n = s.size();
    const auto at = [&](std::size_t i) noexcept { return static_cast<unsigned char>(s[i]); };
    const auto cont = [&](std::size_t i) noexcept { return (at(i) & 0xC0) == 0x80; };
    std::size_t i = 0;
    while (true) {
        i = detail::ascii_prefix(s, i);
        if (i >= n) return std::string_view::npos;
        const unsigned char b0 = at(i);
        if (b0 < 0xC2) return i;  // a continuation byte, or an overlong 2-byte lead
        if (b0 < 0xE0) {
            if (i + 1 >= n || !cont(i + 1)) return i;
            i += 2;
        } else if (b0 < 0xF0) {
            if (i + 2 >= n) return i;
            const unsigned char b1 = at(i + 1);
            const unsigned char lo = b0 == 0xE0 ? 0xA0 : 0x80, hi = b0 == 0xED ? 0x9F : 0xBF;  // overlong, surrogates
            if (b1 < lo || b1 > hi || !cont(i + 2)) return i;
            i += 3;
        } else if (b0 < 0xF5) {
            if (i + 3 >= n) return i;
            const unsigned char b1 = at(i + 1);
            const unsigned char lo = b0 == 0xF0 ? 0x90 : 0x80, hi = b0 == 0xF4 ? 0x8F : 0xBF;  // overlong, > U+10FFFF
            if (b1 < lo || b1 > hi || !cont(i + 2) || !cont(i + 3)) return i;
            i += 4;
        } else {
            return i;
        }
    }
}

[[nodiscard]] inline bool is_valid_utf8(std::string_view s) noexcept {
    // Every string of every request body is checked: 32 bytes a step where the CPU can (detail/simd.hpp).
    if (const int v = ania::detail::utf8_valid_fast(reinterpret_cast<const unsigned char*>(s.data()), s.size()); v >= 0) return v == 1;
    return find_invalid_utf8(s) == std::string_view::npos;
}

/// The length of the UTF-8 encoding of `cp` (a scalar value).
[[nodiscard]] constexpr std::size_t utf8_length(char32_t cp) noexcept {
    return cp < 0x80 ? 1 : cp < 0x800 ? 2 : cp < 0x10000 ? 3 : 4;
}

/// Writes the UTF-8 encoding of `cp` (a scalar value) to out[0..3]; returns how many bytes it wrote.
constexpr std::size_t encode_utf8(char32_t cp, char* out) noexcept {
    if (cp < 0x80) {
        out[0] = static_cast<char>(cp);
        return 1;
    }
    if (cp < 0x800) {
        out[0] = static_cast<char>(0xC0 | (cp >> 6));
        out[1] = static_cast<char>(0x80 | (cp & 0x3F));
        return 2;
    }
    if (cp < 0x10000) {
        out[0] = static_cast<char>(0xE0 | (cp >> 12));
        out[1] = static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
        out[2] = static_cast<char>(0x80 | (cp & 0x3F));
        return 3;
    }
    out[0] = static_cast<char>(0xF0 | (cp >> 18));
    out[1] = static_cast<char>(0x80 | ((cp >> 12) & 0x3F));
    out[2] = static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
    out[3] = static_cast<char>(0x80 | (cp & 0x3F));
    return 4;
}

/// Appends the UTF-8 encoding of `cp` (which must be a scalar value) to `out`.
inline void append_utf8(std::string& out, char32_t cp) {
    char buf[4];
    out.append(buf, encode_utf8(cp, buf));
}

/// A copy of `s` in which every maximal ill-formed subpart is replaced by U+FFFD; valid input is copied as is.
[[nodiscard]] inline std::string repair_utf8(std::string_view s) {
    std::size_t bad = find_invalid_utf8(s);
    if (bad == std::string_view::npos) return std::string(s);
    std::string out;
    out.reserve(s.size() + 8);
    out.append(s.data(), bad);
    std::size_t pos = bad;
    while (pos < s.size()) {
        const std::size_t ascii_end = detail::ascii_prefix(s, pos);
        out.append(s.data() + pos, ascii_end - pos);
        pos = ascii_end;
        if (pos >= s.size()) break;
        const decoded_rune r = decode_rune(s, pos);
        if (r.valid) out.append(s.data() + pos, r.length);
        else append_utf8(out, replacement_character);
        pos += r.length;
    }
    return out;
}

/// Repairs `s` in place; returns true when something was replaced. Allocates only when `s` is invalid.
inline bool repair_utf8_in_place(std::string& s) {
    if (is_valid_utf8(s)) return false;
    s = repair_utf8(s);
    return true;
}

/// Number of code points; each ill-formed subpart counts as one (as it would after repair).
[[nodiscard]] inline std::size_t rune_count(std::string_view s) noexcept {
    std::size_t runes = 0, pos = 0;
    while (pos < s.size()) {
        const std::size_t ascii_end = detail::ascii_prefix(s, pos);
        runes += ascii_end - pos;
        pos = ascii_end;
        if (pos >= s.size()) break;
        pos += decode_rune(s, pos).length;
        ++runes;
    }
    return runes;
}

/// The longest prefix of `s` holding at most `max_runes` code points; never splits a sequence.
[[nodiscard]] inline std::string_view truncate_runes(std::string_view s, std::size_t max_runes) noexcept {
    if (s.size() <= max_runes) return s;  // never more runes than bytes
    std::size_t runes = 0, pos = 0;
    while (pos < s.size() && runes < max_runes) {
        pos += decode_rune(s, pos).length;
        ++runes;
    }
    return s.substr(0, pos);
}

/// White space as Go's unicode.IsSpace sees it (the original trims and folds with strings.Fields).
/// `s` as it may appear inside an error message or a reply that echoes input: valid UTF-8, cut to `max_runes`
/// (with "…" when cut), control characters (NUL included) and DEL written as `\xNN`, so that echoed input
/// can neither forge log lines nor grow without bound.
[[nodiscard]] inline std::string quote_for_message(std::string_view s, std::size_t max_runes = 64) {
    const std::string fixed = repair_utf8(s);
    const std::string_view cut = truncate_runes(fixed, max_runes);
    std::string out;
    out.reserve(cut.size() + 4);
    static constexpr char hex[] = "0123456789abcdef";
    for (const char ch : cut) {
        const auto b = static_cast<unsigned char>(ch);
        if (b < 0x20 || b == 0x7F) {
            out += "\\x";
            out.push_back(hex[b >> 4]);
            out.push_back(hex[b & 0xF]);
        } else {
            out.push_back(ch);
        }
    }
    if (cut.size() < fixed.size()) out += "…";
    return out;
}

[[nodiscard]] constexpr bool is_space(char32_t c) noexcept {
    switch (c) {
    case U'\t': case U'\n': case U'\v': case U'\f': case U'\r': case U' ':
    case U'\u0085': case U'\u00A0': case U'\u1680': case U'\u2028': case U'\u2029':
    case U'\u202F': case U'\u205F': case U'\u3000':
        return true;
    default:
        return c >= U'\u2000' && c <= U'\u200A';
    }
}

/// Leading and trailing white space removed (rune-aware).
[[nodiscard]] inline std::string_view trim(std::string_view s) noexcept {
    std::size_t begin = 0;
    while (begin < s.size()) {
        const decoded_rune r = decode_rune(s, begin);
        if (!r.valid || !is_space(r.value)) break;
        begin += r.length;
    }
    // From the back: a lead byte always starts a rune of the forward decoding, so the last rune is the one
    // starting at the last non-continuation byte, when it reaches the end exactly.
    std::size_t end = s.size();
    while (end > begin) {
        std::size_t j = end - 1;
        while (j > begin && end - j < 4 && (static_cast<unsigned char>(s[j]) & 0xC0) == 0x80) --j;
        const decoded_rune r = decode_rune(s, j);
        if (!r.valid || j + r.length != end || !is_space(r.value)) break;
        end = j;
    }
    return s.substr(begin, end - begin);
}

/// Trimmed, with every run of white space replaced by one ASCII space.
[[nodiscard]] inline std::string fold_whitespace(std::string_view s) {
    std::string out;
    out.reserve(s.size());
    bool pending_space = false;
    std::size_t pos = 0;
    while (pos < s.size()) {
        const decoded_rune r = decode_rune(s, pos);
        if (r.valid && is_space(r.value)) {
            pending_space = !out.empty();
        } else {
            if (pending_space) out.push_back(' ');
            pending_space = false;
            out.append(s.data() + pos, r.length);
        }
        pos += r.length;
    }
    return out;
}

} // namespace ania::text
