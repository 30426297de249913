// ania/memory/tokenize-inl.hpp -- the definitions of <ania/memory/tokenize.hpp>.
// Header-only mode includes this from there; compiled mode compiles it once, in the library (see
// <ania/detail/linkage.hpp>).
// SPDX-License-Identifier: MIT
#pragma once

#include <ania/detail/linkage.hpp>
#if !ANIA_HEADER_ONLY && !defined(ANIA_BUILDING_LIBRARY)
static_assert(false, "compiled mode: the library defines what <ania/memory/tokenize-inl.hpp> defines; include <ania/memory/tokenize.hpp>");
#endif

#include <ania/memory/tokenize.hpp>

namespace ania::memory {

ANIA_INLINE std::string lower(std::string_view s) {
    std::string out;
    out.reserve(s.size());
    std::size_t pos = 0;
    while (pos < s.size()) {
        const auto b = static_cast<unsigned char>(s[pos]);
        if (b < 0x80) {  // ASCII: no decoding
            out.push_back(static_cast<char>(b >= 'A' && b <= 'Z' ? b + 32 : b));
            ++pos;
            continue;
        }
        if (b >= 0xE3 && b <= 0xE9 && pos + 2 < s.size() && (static_cast<unsigned char>(s[pos + 1]) & 0xC0) == 0x80 &&
            (static_cast<unsigned char>(s[pos + 2]) & 0xC0) == 0x80) {  // U+3000..U+9FFF (CJK): lower-casing is the identity
            out.append(s.data() + pos, 3);
            pos += 3;
            continue;
        }
        const auto r = text::decode_rune(s, pos);
        if (!r.valid) out.append(s.substr(pos, r.length));
        else if (r.value < 0x80) out.push_back(static_cast<char>(to_lower(r.value)));
        else text::append_utf8(out, to_lower(r.value));
        pos += r.length;
    }
    return out;
}

ANIA_INLINE std::string normalize_for_dedup(std::string_view s, exact_duplicate_fold mode) {
    std::string out;
    out.reserve(s.size());
    dedup_stream stream{[&](std::uint32_t unit) {
        if (unit >= 0x110000u) out.push_back(static_cast<char>(unit - 0x110000u));
        else text::append_utf8(out, static_cast<char32_t>(unit));
    }, mode == exact_duplicate_fold::width_and_case};
    feed_dedup(s, stream);
    return out;
}

ANIA_INLINE std::uint64_t dedup_key(std::string_view s, exact_duplicate_fold mode) noexcept {
    dedup_stream stream{dedup_hash{}, mode == exact_duplicate_fold::width_and_case};
    feed_dedup(s, stream);
    return stream.put.value;
}

ANIA_INLINE std::size_t word_run_end(std::string_view t, std::size_t pos) noexcept {
    while (pos < t.size()) {
        const auto r = text::decode_rune(t, pos);
        if (!r.valid || is_cjk(r.value) || !is_word_rune(r.value)) break;
        pos += r.length;
    }
    return pos;
}

ANIA_INLINE std::vector<std::string> tokenize(std::string_view s) {
    std::vector<std::string> out;
    std::unordered_set<std::string> seen;
    for_each_token(s, [&](std::string_view tok) {
        if (seen.emplace(tok).second) out.emplace_back(tok);
    });
    return out;
}

} // namespace ania::memory
