// ania/memory/index-inl.hpp -- the definitions of <ania/memory/index.hpp>.
// Header-only mode includes this from there; compiled mode compiles it once, in the library (see
// <ania/detail/linkage.hpp>).
// SPDX-License-Identifier: MIT
#pragma once

#include <ania/detail/linkage.hpp>
#if !ANIA_HEADER_ONLY && !defined(ANIA_BUILDING_LIBRARY)
static_assert(false, "compiled mode: the library defines what <ania/memory/index-inl.hpp> defines; include <ania/memory/index.hpp>");
#endif

#include <ania/memory/index.hpp>

namespace ania::memory::detail {

ANIA_INLINE auto pair_filter::slot(unsigned char a, unsigned char b) noexcept -> std::uint32_t {
    return ((static_cast<std::uint32_t>(a) * 0x9E3779B1u) ^ (static_cast<std::uint32_t>(b) * 0x85EBCA77u)) >> 22;
}

ANIA_INLINE auto pair_filter::add(std::string_view s) noexcept -> void {
    for (std::size_t i = 0; i + 1 < s.size(); ++i) {
        const auto h = slot(static_cast<unsigned char>(s[i]), static_cast<unsigned char>(s[i + 1]));
        bits[h >> 6] |= std::uint64_t{1} << (h & 63);
    }
}

ANIA_INLINE auto pair_filter::add_word_runs(std::string_view lowered) noexcept -> void {
    for (std::size_t pos = 0; pos < lowered.size();) {
        const auto r = text::decode_rune(lowered, pos);
        if (r.valid && !is_cjk(r.value) && is_word_rune(r.value)) {
            const std::size_t end = word_run_end(lowered, pos);
            add(lowered.substr(pos, end - pos));
            pos = end;
        } else {
            pos += r.length;
        }
    }
}

ANIA_INLINE auto pair_filter::is_word_run(std::string_view term) noexcept -> bool {
    if (term.empty()) return false;
    const auto r = text::decode_rune(term, 0);
    return r.valid && !is_cjk(r.value) && is_word_rune(r.value) && word_run_end(term, 0) == term.size();
}

ANIA_INLINE auto pair_filter::sparse() const -> std::vector<std::pair<std::uint8_t, std::uint64_t>> {
    std::vector<std::pair<std::uint8_t, std::uint64_t>> out;
    for (std::size_t w = 0; w < bits.size(); ++w)
        if (bits[w]) out.emplace_back(static_cast<std::uint8_t>(w), bits[w]);
    return out;
}

ANIA_INLINE auto pair_filter::has(const std::vector<std::pair<std::uint8_t, std::uint64_t>>& term) const noexcept -> bool {
    for (const auto& [w, mask] : term)
        if ((mask & ~bits[w]) != 0) return false;
    return true;
}

ANIA_INLINE std::size_t mix_key(std::uint64_t k) noexcept {
    k ^= k >> 33;
    k *= 0xFF51AFD7ED558CCDULL;
    return static_cast<std::size_t>(k ^ (k >> 33));
}

ANIA_INLINE auto code_point_pair_layout::value(slot s, const key& k) const noexcept -> std::uint32_t {
    const auto v = static_cast<std::uint32_t>(s >> key_bits);
    return v == overflow ? overflow_.find(k.packed)->second : v;
}

ANIA_INLINE auto code_point_pair_layout::store(const key& k, std::uint32_t v) -> slot {
    const std::uint32_t stored = v < overflow ? v : overflow;
    if (stored == overflow) overflow_.emplace(k.packed, v);
    return k.packed | (std::uint64_t{stored} << key_bits);
}

ANIA_INLINE auto string_layout::reserve(std::size_t n) -> void {
    spans_.reserve(n);
    arena_.reserve(n * 6);
}

ANIA_INLINE auto string_layout::matches(const slot& s, const key& k) const noexcept -> bool {
    return s.tag == static_cast<std::uint32_t>(k.h >> 32) && text_of(s.index - 1) == k.text;
}

ANIA_INLINE auto string_layout::store(const key& k, std::uint32_t v) -> slot {
    spans_.push_back({static_cast<std::uint32_t>(arena_.size()), static_cast<std::uint32_t>(k.text.size()), v});
    arena_.append(k.text);
    return {static_cast<std::uint32_t>(k.h >> 32), static_cast<std::uint32_t>(spans_.size())};
}

ANIA_INLINE auto string_layout::hash_text(std::string_view s) noexcept -> std::uint64_t {
    const auto mix = [](std::uint64_t x) noexcept {
        x *= 0x9E3779B97F4A7C15ULL;
        return x ^ (x >> 32);
    };
    const char* p = s.data();
    std::size_t n = s.size();
    std::uint64_t h = 0x243F6A8885A308D3ULL ^ n, w = 0;
    if (n > 8) {
        for (; n > 8; p += 8, n -= 8) {
            std::memcpy(&w, p, 8);
            h = mix(h ^ w);
        }
        std::memcpy(&w, s.data() + s.size() - 8, 8);  // the last eight, overlapping
    } else if (n >= 4) {
        std::uint32_t a, b;
        std::memcpy(&a, p, 4);
        std::memcpy(&b, p + n - 4, 4);
        w = (std::uint64_t{a} << 32) | b;
    } else if (n > 0) {
        w = (std::uint64_t{static_cast<unsigned char>(p[0])} << 16) | (std::uint64_t{static_cast<unsigned char>(p[n >> 1])} << 8) |
            static_cast<unsigned char>(p[n - 1]);
    }
    h = mix(h ^ w);
    h ^= h >> 29;
    h *= 0xBF58476D1CE4E5B9ULL;
    return h ^ (h >> 32);
}

ANIA_INLINE auto string_layout::text_of(std::uint32_t index) const noexcept -> std::string_view {
    return std::string_view(arena_).substr(spans_[index].offset, spans_[index].length);
}

ANIA_INLINE auto vocabulary::reserve(std::size_t bytes) -> void {
    bigrams_.reserve(bytes / 12);
    words_.reserve(bytes / 32);
}

ANIA_INLINE auto vocabulary::word(std::string_view w) -> std::uint32_t {
    return words_.find_or_insert(w, [&] { return next_++; });
}

ANIA_INLINE auto vocabulary::token(std::string_view t) -> std::uint32_t {
    char32_t cp[2];
    switch (short_cjk(t, cp)) {
    case 1: return rune(cp[0]);
    case 2: return bigram(cp[0], cp[1]);
    default: return word(t);
    }
}

ANIA_INLINE auto vocabulary::find(std::string_view t) const noexcept -> std::optional<std::uint32_t> {
    char32_t cp[2];
    switch (short_cjk(t, cp)) {
    case 1: return find_rune(cp[0]);
    case 2: return find_bigram(cp[0], cp[1]);
    default: return find_word(t);
    }
}

ANIA_INLINE auto vocabulary::short_cjk(std::string_view t, char32_t (&cp)[2]) noexcept -> int {
    int n = 0;
    for (std::size_t pos = 0; pos < t.size(); ++n) {
        const auto r = text::decode_rune(t, pos);
        if (n == 2 || !r.valid || !is_cjk(r.value)) return 0;
        cp[n] = r.value;
        pos += r.length;
    }
    return n;
}

ANIA_INLINE auto indexed_entry::cjk_contains() const noexcept -> std::span<const std::uint32_t> {
    return {ids.data() + token_end, contains_end - token_end};
}

ANIA_INLINE auto indexed_entry::cjk_tag_contains() const noexcept -> std::span<const std::uint32_t> {
    return {ids.data() + contains_end, tag_contains_end - contains_end};
}

ANIA_INLINE auto indexed_entry::numbers() const noexcept -> std::span<const std::uint32_t> {
    return {ids.data() + tag_contains_end, ids.size() - tag_contains_end};
}

ANIA_INLINE auto id_buffer::reserve(std::size_t n) -> std::uint32_t* {
    if (n > capacity_) {
        data_ = std::make_unique_for_overwrite<std::uint32_t[]>(n);
        capacity_ = n;
    }
    return data_.get();
}

ANIA_INLINE auto postings_table::of(std::uint32_t token) const noexcept -> std::span<const std::uint32_t> {
    if (static_cast<std::size_t>(token) + 1 >= offsets.size()) return {};
    return {items.data() + offsets[token], offsets[token + 1] - offsets[token]};
}

ANIA_INLINE bool all_digits(std::string_view t) noexcept {
    if (t.empty()) return false;
    for (const char c : t)
        if (c < '0' || c > '9') return false;
    return true;
}

} // namespace ania::memory::detail
