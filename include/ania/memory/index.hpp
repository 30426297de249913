// ania/memory/index.hpp -- the per-scope index of long-term memory: a scope's vocabulary (dense token ids),
// what each entry contributes (token ids, CJK containment, lower-cased text, pair filters), and postings.
// SPDX-License-Identifier: MIT
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

#include <ania/detail/linkage.hpp>
#include <ania/memory/tokenize.hpp>
#include <ania/text/utf8.hpp>

namespace ania::memory::detail {

/// 1024-bit set of hashed adjacent byte pairs: "contains substring t" is impossible unless every pair of t
/// is in it, which rules most entries out before a real search. An index adds only the pairs inside the
/// text's word runs (add_word_runs): a term that is itself one word run can occur only inside one of those,
/// and the filter is consulted for such terms only (is_word_run).
struct pair_filter {
    std::array<std::uint64_t, 16> bits{};
    static std::uint32_t slot(unsigned char a, unsigned char b) noexcept;
    void add(std::string_view s) noexcept;
    /// add() for every maximal run of word runes of `lowered`.
    void add_word_runs(std::string_view lowered) noexcept;
    [[nodiscard]] static bool is_word_run(std::string_view term) noexcept;
    /// The set bits of a term's filter, so that testing an entry costs one check per pair of the term.
    [[nodiscard]] std::vector<std::pair<std::uint8_t, std::uint64_t>> sparse() const;
    [[nodiscard]] bool has(const std::vector<std::pair<std::uint8_t, std::uint64_t>>& term) const noexcept;
};

/// The slot hash of the integer-keyed tables (MurmurHash3's finaliser, halved).
ANIA_INLINE std::size_t mix_key(std::uint64_t k) noexcept;

/// The one hash table of the index: key -> 32-bit value, open addressing with linear probing over a
/// power-of-two array of slots, filled at most to Layout::max_load. What a slot holds and how a key is found
/// in it is the Layout's (a base, so that a stateless layout costs nothing):
///   slot; key (what a look-up carries, hash computed once);  hash(key), hash_of(slot) (for rehashing),
///   empty(slot), matches(slot, key), value(slot, key), store(key, value) -> slot (may keep side data).
/// Nothing is ever erased (a scope is indexed again instead), so probing needs no tombstones.
template <class Layout>
class probe_table : Layout {
public:
    using slot = typename Layout::slot;
    using key = typename Layout::key;

    /// The value of `k`, or make()'s, stored for it. Inlined: indexing calls it once or twice per rune, and
    /// nearly every call finds its key.
    template <class Make>
    [[gnu::always_inline]] std::uint32_t find_or_insert(const key& k, Make&& make) {
        if (slots_.empty()) grow();
        const std::size_t mask = slots_.size() - 1;
        for (std::size_t i = this->hash(k) & mask;; i = (i + 1) & mask) {
            slot& sl = slots_[i];
            if (Layout::empty(sl)) return insert(k, make(), i);
            if (this->matches(sl, k)) return this->value(sl, k);
        }
    }
    [[nodiscard]] std::optional<std::uint32_t> find(const key& k) const noexcept {
        if (slots_.empty()) return std::nullopt;
        const std::size_t mask = slots_.size() - 1;
        for (std::size_t i = this->hash(k) & mask;; i = (i + 1) & mask) {
            const slot& sl = slots_[i];
            if (Layout::empty(sl)) return std::nullopt;
            if (this->matches(sl, k)) return this->value(sl, k);
        }
    }
    [[nodiscard]] std::size_t size() const noexcept { return used_; }
    /// Room for `n` keys without growing.
    void reserve(std::size_t n) {
        Layout::reserve(n);
        std::size_t want = 16;
        while (want * Layout::max_load.num < n * Layout::max_load.den) want *= 2;
        if (want > slots_.size()) rehash(want);
    }

private:
    /// Stores a new key at slot `at` (where its probe ended), or after growing (the load bound checked only
    /// here: the look-ups that find their key, nearly all of them, pay nothing for it).
    [[gnu::always_inline]] std::uint32_t insert(const key& k, std::uint32_t value, std::size_t at) {
        if ((used_ + 1) * Layout::max_load.den > slots_.size() * Layout::max_load.num) {
            grow();
            const std::size_t mask = slots_.size() - 1;
            at = this->hash(k) & mask;
            while (!Layout::empty(slots_[at])) at = (at + 1) & mask;
        }
        slots_[at] = this->store(k, value);
        ++used_;
        return value;
    }
    void grow() { rehash(slots_.empty() ? Layout::initial_slots : slots_.size() * 2); }
    void rehash(std::size_t size) {
        std::vector<slot> next(size);
        const std::size_t mask = size - 1;
        for (const slot& sl : slots_) {
            if (Layout::empty(sl)) continue;
            std::size_t i = this->hash_of(sl) & mask;
            while (!Layout::empty(next[i])) i = (i + 1) & mask;
            next[i] = sl;
        }
        slots_ = std::move(next);
    }

    std::vector<slot> slots_;
    std::size_t used_ = 0;
};

struct load_factor {
    std::size_t num, den;
};

/// Integer keys: key and value side by side, so that a probe touches one cache line.
template <class Int>
struct integer_layout {
    struct slot {
        Int key = 0;  // the key + 1: 0 marks an empty slot
        std::uint32_t value = 0;
    };
    struct key {
        Int stored;  // the key + 1
        key(Int k) noexcept : stored(k + 1) {}  // NOLINT: a look-up by the integer itself
    };
    static constexpr load_factor max_load{2, 3};
    static constexpr std::size_t initial_slots = 1024;
    static void reserve(std::size_t) noexcept {}
    [[nodiscard]] static std::size_t hash(const key& k) noexcept { return mix_key(k.stored); }
    [[nodiscard]] static std::size_t hash_of(const slot& s) noexcept { return mix_key(s.key); }
    [[nodiscard]] static bool empty(const slot& s) noexcept { return s.key == 0; }
    [[nodiscard]] static bool matches(const slot& s, const key& k) noexcept { return s.key == k.stored; }
    [[nodiscard]] static std::uint32_t value(const slot& s, const key&) noexcept { return s.value; }
    [[nodiscard]] static slot store(const key& k, std::uint32_t v) noexcept { return {k.stored, v}; }
};

/// Two code points (a CJK bigram) in 8-byte slots: the 42-bit key and a 22-bit value share one word, which
/// halves the table that indexing probes once per CJK rune. Values that do not fit (a scope with over four
/// million distinct tokens) live in a side map.
struct code_point_pair_layout {
    static constexpr unsigned key_bits = 42;
    static constexpr std::uint64_t key_mask = (std::uint64_t{1} << key_bits) - 1;
    static constexpr std::uint32_t overflow = (1u << (64 - key_bits)) - 1;  // value stored in overflow_

    using slot = std::uint64_t;
    struct key {
        std::uint64_t packed;  // + 1: 0 marks an empty slot
        key(char32_t a, char32_t b) noexcept : packed(((std::uint64_t{a} << 21) | (b & 0x1FFFFFu)) + 1) {}
    };
    static constexpr load_factor max_load{2, 3};
    static constexpr std::size_t initial_slots = 1024;
    static void reserve(std::size_t) noexcept {}
    [[nodiscard]] static std::size_t hash(const key& k) noexcept { return mix_key(k.packed); }
    [[nodiscard]] static std::size_t hash_of(slot s) noexcept { return mix_key(s & key_mask); }
    [[nodiscard]] static bool empty(slot s) noexcept { return s == 0; }
    [[nodiscard]] static bool matches(slot s, const key& k) noexcept { return (s & key_mask) == k.packed; }
    [[nodiscard]] std::uint32_t value(slot s, const key& k) const noexcept;
    [[nodiscard]] slot store(const key& k, std::uint32_t v);

    std::unordered_map<std::uint64_t, std::uint32_t> overflow_;
};

/// Text keys in one byte arena (indexing looks up every word of every entry, and std::unordered_map's node
/// chasing dominated that); a slot holds the hash's high half as a tag, so most mismatches never compare
/// text, and the index of the text's span.
struct string_layout {
    struct slot {
        std::uint32_t tag = 0;
        std::uint32_t index = 0;  // into spans_, + 1; 0 = empty
    };
    struct key {
        std::string_view text;
        std::uint64_t h;
        key(std::string_view t) noexcept : text(t), h(hash_text(t)) {}  // NOLINT: a look-up by the text itself
    };
    static constexpr load_factor max_load{1, 2};
    static constexpr std::size_t initial_slots = 256;
    void reserve(std::size_t n);
    [[nodiscard]] static std::size_t hash(const key& k) noexcept { return static_cast<std::size_t>(k.h); }
    [[nodiscard]] std::size_t hash_of(const slot& s) const noexcept { return static_cast<std::size_t>(hash_text(text_of(s.index - 1))); }
    [[nodiscard]] static bool empty(const slot& s) noexcept { return s.index == 0; }
    [[nodiscard]] bool matches(const slot& s, const key& k) const noexcept;
    [[nodiscard]] std::uint32_t value(const slot& s, const key&) const noexcept { return spans_[s.index - 1].value; }
    [[nodiscard]] slot store(const key& k, std::uint32_t v);

    /// Eight bytes at a time (tokens are short: one or two multiplications each), then a final mix.
    [[nodiscard]] static std::uint64_t hash_text(std::string_view s) noexcept;

private:
    struct span {
        std::uint32_t offset, length, value;
    };
    [[nodiscard]] std::string_view text_of(std::uint32_t index) const noexcept;

    std::string arena_;
    std::vector<span> spans_;
};

using code_point_pair_map = probe_table<code_point_pair_layout>;

/// The tokens of one scope, each with a dense id of that scope (so that postings and stamps are sized by
/// the scope, not by every token the process has seen). A CJK rune or bigram is found by its code points,
/// never by hashing bytes; any other token by its text. A token of one or two CJK runes gets the same id
/// whichever way it is looked up (keyword search relies on that).
class vocabulary {
public:
    [[nodiscard]] std::uint32_t size() const noexcept { return next_; }
    /// Room for the tokens of about `bytes` of text, so that indexing a scope rarely rehashes.
    void reserve(std::size_t bytes);

    [[gnu::always_inline]] std::uint32_t rune(char32_t c) {
        return runes_.find_or_insert(static_cast<std::uint32_t>(c), [&] { return next_++; });
    }
    [[gnu::always_inline]] std::uint32_t bigram(char32_t a, char32_t b) {
        return bigrams_.find_or_insert({a, b}, [&] { return next_++; });
    }
    /// A word (no CJK rune in it): by its text.
    std::uint32_t word(std::string_view w);
    /// Any token.
    std::uint32_t token(std::string_view t);

    [[nodiscard]] std::optional<std::uint32_t> find_rune(char32_t c) const noexcept { return runes_.find(static_cast<std::uint32_t>(c)); }
    [[nodiscard]] std::optional<std::uint32_t> find_bigram(char32_t a, char32_t b) const noexcept { return bigrams_.find({a, b}); }
    [[nodiscard]] std::optional<std::uint32_t> find_word(std::string_view w) const noexcept { return words_.find(w); }
    [[nodiscard]] std::optional<std::uint32_t> find(std::string_view t) const noexcept;

    /// 1 or 2 when `t` is that many CJK runes (their code points in cp), else 0.
    static int short_cjk(std::string_view t, char32_t (&cp)[2]) noexcept;

private:
    probe_table<integer_layout<std::uint32_t>> runes_;
    probe_table<code_point_pair_layout> bigrams_;
    probe_table<string_layout> words_;
    std::uint32_t next_ = 0;
};

/// What one entry contributes to its scope's index; ids are the scope's vocabulary ids.
struct indexed_entry {
    // One allocation for every id list of the entry, in this order:
    //   tokens           token ids, each once
    //   cjk_contains     Keyword search: a CJK term (a bigram or one rune) is a substring of a text exactly
    //                    when the text's CJK runs contain it, i.e. when it is one of the text's bigrams or
    //                    runes. These are their ids for the content, each once, but for those among the
    //                    tokens (tokens are substrings of the text: the postings answer for them),
    //   cjk_tag_contains and for the tags, once per tag holding it;
    //   numbers          ids of the all-digit tokens, sorted.
    std::vector<std::uint32_t> ids;
    std::uint32_t token_end = 0, contains_end = 0, tag_contains_end = 0;
    std::string lowered;                 // content, lower-cased (see lower)
    std::vector<std::string> lowered_tags;
    std::uint64_t dedup = 0;             // dedup_key(content, fold): exact duplicates, confirmed on a match
    pair_filter content_pairs, tag_pairs;  // byte pairs inside word runs (see pair_filter)
    float norm = 0;                      // of the embedding

    [[nodiscard]] std::span<const std::uint32_t> tokens() const noexcept { return {ids.data(), token_end}; }
    [[nodiscard]] std::span<const std::uint32_t> cjk_contains() const noexcept;
    [[nodiscard]] std::span<const std::uint32_t> cjk_tag_contains() const noexcept;
    [[nodiscard]] std::span<const std::uint32_t> numbers() const noexcept;
};

/// Scratch space for ids that is never initialised (std::vector would zero it on every resize).
class id_buffer {
public:
    std::uint32_t* reserve(std::size_t n);

private:
    std::unique_ptr<std::uint32_t[]> data_;
    std::size_t capacity_ = 0;
};

/// Posting lists of a whole scope in two arrays (compressed rows): one allocation instead of one per token.
struct postings_table {
    std::vector<std::uint32_t> offsets;  // token id -> start in items; size = dictionary size + 1
    std::vector<std::uint32_t> items;    // entry positions, ascending within a token

    [[nodiscard]] std::span<const std::uint32_t> of(std::uint32_t token) const noexcept;
    template <class Entries, class Ids>
    void build(std::size_t dictionary_size, const Entries& entries, Ids ids_of) {
        offsets.assign(dictionary_size + 1, 0);
        for (const auto& e : entries)
            for (const std::uint32_t t : (e.*ids_of)()) ++offsets[t + 1];
        for (std::size_t t = 0; t < dictionary_size; ++t) offsets[t + 1] += offsets[t];
        items.resize(offsets[dictionary_size]);
        // offsets[t] serves as token t's cursor, and ends at offsets[t + 1]: shifted back afterwards.
        for (std::uint32_t pos = 0; pos < entries.size(); ++pos)
            for (const std::uint32_t t : (entries[pos].*ids_of)()) items[offsets[t]++] = pos;
        std::copy_backward(offsets.begin(), offsets.end() - 1, offsets.end());
        offsets[0] = 0;
    }
};

ANIA_INLINE bool all_digits(std::string_view t) noexcept;

} // namespace ania::memory::detail

#if ANIA_HEADER_ONLY
#include <ania/memory/index-inl.hpp>
#endif
