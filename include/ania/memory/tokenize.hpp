// ania/memory/tokenize.hpp -- the CJK-aware tokenizer of long-term memory (dedup and keyword search).
// SPDX-License-Identifier: MIT
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <unordered_set>
#include <vector>

#include <ania/detail/linkage.hpp>
#include <ania/memory/concepts.hpp>
#include <ania/text/unicode.hpp>
#include <ania/text/utf8.hpp>

namespace ania::memory {

/// CJK as the tokenizer sees it (text::is_cjk; the summary's script check uses the same).
using text::is_cjk;

/// A word rune (SPEC §4 tokenizer): a letter or a decimal digit (Unicode L* and Nd; CJK runes are told
/// apart by is_cjk first).
[[nodiscard]] constexpr bool is_word_rune(char32_t c) noexcept { return text::is_letter_or_digit(c); }

/// Unicode's simple lower-case mapping (see text::to_lower).
[[nodiscard]] constexpr char32_t to_lower(char32_t c) noexcept { return text::to_lower(c); }

/// `s` lower-cased (see to_lower); invalid sequences are kept as they are. A few mappings change a rune's
/// UTF-8 length (U+1E9E, U+212A, U+023A...), so the result may differ in size from `s`.
[[nodiscard]] ANIA_INLINE std::string lower(std::string_view s);

/// What exact-duplicate detection treats as the same content. SPEC §4: the contents equal after white space
/// is folded (trimmed, every run one space) — "Alice" and "alice" are two memories. `width_and_case`
/// (opt-in, memory.fold_case_and_width) also folds full-width ASCII to half-width, U+3000 to a space and
/// case, so "ＡＢＣ" and "abc" are one.
enum class exact_duplicate_fold : std::uint8_t { white_space, width_and_case };

/// The rune mapping of exact_duplicate_fold::width_and_case: full-width ASCII to half-width, U+3000 to a
/// space, lower-cased.
[[nodiscard]] constexpr char32_t dedup_fold(char32_t c) noexcept {
    if (c >= 0xFF01 && c <= 0xFF5E) c -= 0xFEE0;
    else if (c == 0x3000) c = U' ';
    return to_lower(c);
}

/// The dedup normal form as a stream of units: with `width_and_case`, dedup_fold on every rune; white space
/// trimmed and folded to one space; an invalid byte kept as the unit 0x110000 + byte. Feed it the runes of a
/// text in order, as written (valid() or invalid() per maximal subpart); it calls `put(std::uint32_t unit)`.
/// Indexing feeds it while it lower-cases and tokenises the same runes, so the text is decoded once.
template <class Put>
struct dedup_stream {
    Put put;
    bool fold = false;  ///< exact_duplicate_fold::width_and_case
    bool pending_space = false, any = false;

    void valid(char32_t c) {
        if (fold) c = dedup_fold(c);
        if (text::is_space(c)) space();
        else folded(c);
    }
    void invalid(std::string_view bytes) {
        for (const char b : bytes) folded(0x110000u + static_cast<unsigned char>(b));
    }
    // The two steps of valid(), for callers that know a rune's fold already (ASCII, CJK).
    void space() noexcept { pending_space = any; }
    void folded(std::uint32_t unit) {
        if (pending_space) put(std::uint32_t{' '});
        pending_space = false;
        any = true;
        put(unit);
    }
};
template <class Put>
dedup_stream(Put, bool) -> dedup_stream<Put>;

/// Feeds every rune of `s` to `stream` (see dedup_stream).
template <class Stream>
void feed_dedup(std::string_view s, Stream& stream) {
    for (std::size_t pos = 0; pos < s.size();) {
        const auto r = text::decode_rune(s, pos);
        if (r.valid) stream.valid(r.value);
        else stream.invalid(s.substr(pos, r.length));
        pos += r.length;
    }
}

/// The normal form for exact-duplicate detection (see dedup_stream), as text.
[[nodiscard]] ANIA_INLINE std::string normalize_for_dedup(std::string_view s,
                                                          exact_duplicate_fold mode = exact_duplicate_fold::white_space);

/// FNV-1a over 32-bit units: what dedup_key hashes the normal form with.
struct dedup_hash {
    std::uint64_t value = 1469598103934665603ULL;
    void operator()(std::uint32_t unit) noexcept { value = (value ^ unit) * 1099511628211ULL; }
};

/// A 64-bit hash of the units of normalize_for_dedup(s, mode) (one per rune, not per byte), computed without
/// building the string: equal normal forms give equal keys; a key match is confirmed by comparing them.
[[nodiscard]] ANIA_INLINE std::uint64_t dedup_key(std::string_view s,
                                                  exact_duplicate_fold mode = exact_duplicate_fold::white_space) noexcept;

/// End of the maximal run of word runes (letters, digits; not CJK) that starts at `pos`.
[[nodiscard]] ANIA_INLINE std::size_t word_run_end(std::string_view t, std::size_t pos) noexcept;

/// Tokens of `s` in first-occurrence order, without repeats (the reference semantics of the shared data set):
/// lower-case first; a maximal run of word runes is one token; a maximal CJK run of length L gives its rune
/// when L = 1, else all adjacent bigrams, plus every single rune when 2 <= L <= 3; anything else separates.
template <class Emit>
void for_each_token_lowered(std::string_view t, Emit&& emit) {
    std::size_t pos = 0;
    while (pos < t.size()) {
        auto r = text::decode_rune(t, pos);
        if (r.valid && is_cjk(r.value)) {
            // Bigrams are emitted as the run is read; the single runes (runs of 2 or 3) at its end.
            std::size_t first[4];
            std::size_t len = 0, prev = 0;
            while (pos < t.size()) {
                r = text::decode_rune(t, pos);
                if (!r.valid || !is_cjk(r.value)) break;
                if (len >= 2) emit(t.substr(prev, pos + r.length - prev));
                else if (len == 1) emit(t.substr(first[0], pos + r.length - first[0]));
                if (len < 4) first[len] = pos;
                prev = pos;
                pos += r.length;
                ++len;
            }
            if (len < 4) first[len] = pos;
            if (len == 1) emit(t.substr(first[0], first[1] - first[0]));
            else if (len <= 3)
                for (std::size_t i = 0; i < len; ++i) emit(t.substr(first[i], first[i + 1] - first[i]));
        } else if (r.valid && is_word_rune(r.value)) {
            const std::size_t b = pos;
            pos = word_run_end(t, pos);
            emit(t.substr(b, pos - b));
        } else {
            pos += r.length;
        }
    }
}

/// Calls `emit(std::string_view)` for each token of `s` in order, repeats included (see tokenize).
template <class Emit>
void for_each_token(std::string_view s, Emit&& emit) {
    const std::string low = lower(s);
    for_each_token_lowered(low, emit);
}

/// The reference tokenizer (see for_each_token): words, CJK bigrams, single runes of short CJK runs.
struct cjk_bigram_tokenizer {
    static constexpr bool cjk_bigram_tokens = true;  ///< see cjk_bigram_compatible: the manager's fused path
    template <class Emit>
    void operator()(std::string_view lowered, Emit&& emit) const {
        for_each_token_lowered(lowered, emit);
    }
};
static_assert(cjk_bigram_compatible<cjk_bigram_tokenizer>);

/// The token set of `s`, in first-occurrence order.
[[nodiscard]] ANIA_INLINE std::vector<std::string> tokenize(std::string_view s);

} // namespace ania::memory

#if ANIA_HEADER_ONLY
#include <ania/memory/tokenize-inl.hpp>
#endif
