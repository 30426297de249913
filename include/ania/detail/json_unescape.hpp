// ania/detail/json_unescape.hpp -- one escape of a JSON string decoded, by the rules of nlohmann's parser.
// SPDX-License-Identifier: MIT
//
// The readers that skip the JSON document for speed (detail/fast_message_parser.hpp, openai/stream_chunk.hpp)
// must decode a string exactly as nlohmann would, and reject exactly what it rejects: one decoder for both.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include <ania/text/utf8.hpp>

namespace ania::detail {

[[nodiscard]] constexpr int json_hex_digit(char c) noexcept {
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    return -1;
}

/// Four hex digits at s[pos..], `pos` moved past them.
[[nodiscard]] constexpr bool read_json_hex4(std::string_view s, std::size_t& pos, std::uint32_t& v) noexcept {
    if (pos + 4 > s.size()) return false;
    v = 0;
    for (int i = 0; i < 4; ++i) {
        const int h = json_hex_digit(s[pos++]);
        if (h < 0) return false;
        v = (v << 4) | static_cast<std::uint32_t>(h);
    }
    return true;
}

/// The escape whose letter is at s[pos] (just past the backslash), appended to `out` as UTF-8, `pos` moved past
/// it. False for an unknown letter, bad hex digits, or a surrogate that is not a high one followed by `\u` and
/// a low one (nlohmann rejects those too).
[[nodiscard]] inline bool decode_json_escape(std::string_view s, std::size_t& pos, std::string& out) {
    if (pos >= s.size()) return false;
    switch (s[pos++]) {
    case '"': out.push_back('"'); return true;
    case '\\': out.push_back('\\'); return true;
    case '/': out.push_back('/'); return true;
    case 'b': out.push_back('\b'); return true;
    case 'f': out.push_back('\f'); return true;
    case 'n': out.push_back('\n'); return true;
    case 'r': out.push_back('\r'); return true;
    case 't': out.push_back('\t'); return true;
    case 'u': {
        std::uint32_t cp;
        if (!read_json_hex4(s, pos, cp)) return false;
        if (cp >= 0xD800 && cp <= 0xDBFF) {
            std::uint32_t lo;
            if (s.substr(pos, 2) != "\\u") return false;
            pos += 2;
            if (!read_json_hex4(s, pos, lo) || lo < 0xDC00 || lo > 0xDFFF) return false;
            cp = 0x10000 + ((cp - 0xD800) << 10) + (lo - 0xDC00);
        } else if (cp >= 0xDC00 && cp <= 0xDFFF) {
            return false;
        }
        text::append_utf8(out, static_cast<char32_t>(cp));
        return true;
    }
    default:
        return false;
    }
}

} // namespace ania::detail
