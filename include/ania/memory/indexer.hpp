// ania/memory/indexer.hpp -- what an entry contributes to its scope's index, computed in one pass.
// SPDX-License-Identifier: MIT
#pragma once

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <ania/detail/linkage.hpp>
#include <ania/detail/dot.hpp>
#include <ania/memory/concepts.hpp>
#include <ania/memory/index.hpp>
#include <ania/memory/scope_index.hpp>
#include <ania/memory/tokenize.hpp>
#include <ania/text/utf8.hpp>

namespace ania::memory::detail {

/// A set of ids that empties in O(1): a stamp per id, and the current epoch; an id is in the set when its
/// stamp is the epoch. Sized by the largest vocabulary seen; grows on demand.
class epoch_set {
public:
    /// Room for ids below `n` (so that insert_raw needs no check).
    void reserve(std::size_t n);
    /// True when `id` was not in the set (it is now).
    bool insert(std::uint32_t id);
    /// Empties the set.
    void clear() noexcept;
    /// For branch-free loops: stamps (valid below the reserved size) and the epoch that marks membership.
    [[nodiscard]] std::uint32_t* stamps() noexcept { return stamp_.data(); }
    [[nodiscard]] std::uint32_t epoch() const noexcept { return epoch_; }

private:
    std::vector<std::uint32_t> stamp_;
    std::uint32_t epoch_ = 1;
};

/// How indexing sees one rune (see peek_rune).
enum class rune_kind : std::uint8_t { other, word, cjk, invalid };
struct read_result {
    char32_t c;         // lower-cased (for an invalid sequence: U+FFFD)
    char32_t original;  // as written
    std::uint8_t length;
    rune_kind kind;
};

/// The rune at `pos` of `in`, lower-cased and classified for the tokenizer; ASCII and U+3000..U+9FFF
/// (CJK) without the general decoder. Inlined: indexing and the near-duplicate check call it per rune.
[[gnu::always_inline]] inline read_result peek_rune(std::string_view in, std::size_t pos) noexcept {
    const auto b = static_cast<unsigned char>(in[pos]);
    if (b < 0x80) {
        const auto c = static_cast<char32_t>(b >= 'A' && b <= 'Z' ? b + 32 : b);
        const bool word = (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9');
        return {c, b, 1, word ? rune_kind::word : rune_kind::other};
    }
    if (b >= 0xE3 && b <= 0xE9 && pos + 2 < in.size() && (static_cast<unsigned char>(in[pos + 1]) & 0xC0) == 0x80 &&
        (static_cast<unsigned char>(in[pos + 2]) & 0xC0) == 0x80) {  // lower-casing is the identity here
        const char32_t c = (char32_t{b & 0x0Fu} << 12) | (char32_t{static_cast<unsigned char>(in[pos + 1]) & 0x3Fu} << 6) |
                           (static_cast<unsigned char>(in[pos + 2]) & 0x3Fu);
        const bool cjk = c >= 0x4E00 || (c >= 0x3400 && c <= 0x4DBF) || (c >= 0x3040 && c <= 0x30FF);  // is_cjk here
        return {c, c, 3, cjk ? rune_kind::cjk : is_word_rune(c) ? rune_kind::word : rune_kind::other};
    }
    const auto r = text::decode_rune(in, pos);
    if (!r.valid) return {r.value, r.value, r.length, rune_kind::invalid};
    const char32_t c = to_lower(r.value);
    return {c, r.value, r.length, is_cjk(c) ? rune_kind::cjk : is_word_rune(c) ? rune_kind::word : rune_kind::other};
}

[[nodiscard]] ANIA_INLINE bool all_cjk(std::string_view t) noexcept;

[[nodiscard]] inline float norm_of(const std::vector<float>& v) noexcept { return std::sqrt(ania::detail::dot(v, v)); }

/// Computes what an entry contributes to its scope's index (see indexed_entry) and builds whole scopes.
/// With a cjk_bigram_compatible tokenizer everything comes from one fused pass over the content's runes
/// (lower-casing, the dedup key, tokens, containment ids, numbers, pair filter); with any other tokenizer
/// from the tokenizer's tokens of the lower-cased text. Its buffers are per thread (an operation on one
/// scope allocates nothing once they have grown), so one indexer serves every scope and thread.
template <memory_tokenizer Tokenizer>
class indexer {
public:
    indexer(const Tokenizer& tok, exact_duplicate_fold fold) noexcept : tok_(tok), fold_(fold) {}

    /// What `e` contributes to an index whose vocabulary is `vocab` (new tokens join it).
    [[nodiscard]] indexed_entry make(vocabulary& vocab, const entry& e) const {
        scratch_space& sc = scratch();
        indexed_entry x;
        std::span<const std::uint32_t> tokens, contains;  // of the content
        sc.numbers.clear();
        sc.tag_contains.clear();
        // The golden semantics tokenise the whitespace-folded text; folding never changes tokens.
        if constexpr (cjk_bigram_compatible<Tokenizer>) {
            std::tie(tokens, contains) = index_fused(vocab, e.content, x);
        } else {
            sc.tokens.clear();
            sc.contains.clear();
            x.lowered = lower(e.content);
            x.dedup = dedup_key(e.content, fold_);
            sc.seen.reserve(vocab.size() + 2 * x.lowered.size() + 8);  // a guess; insert() grows it if needed
            tok_(x.lowered, [&](std::string_view t) {
                const std::uint32_t id = vocab.token(t);
                if (sc.seen.insert(id)) {
                    sc.tokens.push_back(id);
                    if (all_digits(t)) sc.numbers.push_back(id);
                }
            });
            add_cjk_ids(vocab, x.lowered, sc.contains, sc.seen);  // same set: the tokens among them are left out
            sc.seen.clear();
            x.content_pairs.add_word_runs(x.lowered);
            tokens = sc.tokens;
            contains = sc.contains;
        }
        x.lowered_tags.reserve(e.tags.size());
        for (const auto& t : e.tags) {
            x.lowered_tags.push_back(lower(t));
            x.tag_pairs.add_word_runs(x.lowered_tags.back());
            add_cjk_ids(vocab, x.lowered_tags.back(), sc.tag_contains, sc.seen);
            sc.seen.clear();
        }
        std::vector<std::uint32_t>& numbers = sc.numbers;
        std::sort(numbers.begin(), numbers.end());
        x.ids.reserve(tokens.size() + contains.size() + sc.tag_contains.size() + numbers.size());  // exact: one allocation
        x.ids.assign(tokens.begin(), tokens.end());
        x.ids.insert(x.ids.end(), contains.begin(), contains.end());
        x.ids.insert(x.ids.end(), sc.tag_contains.begin(), sc.tag_contains.end());
        x.ids.insert(x.ids.end(), numbers.begin(), numbers.end());
        x.token_end = static_cast<std::uint32_t>(tokens.size());
        x.contains_end = static_cast<std::uint32_t>(tokens.size() + contains.size());
        x.tag_contains_end = static_cast<std::uint32_t>(x.contains_end + sc.tag_contains.size());
        x.norm = norm_of(e.embedding);
        return x;
    }

    /// Indexes si.entries from scratch: a fresh vocabulary, every entry, the postings (under `sim`).
    template <similarity_policy Similarity>
    void build(scope_index& si, const Similarity& sim) const {
        si.vocab = {};
        si.idx.clear();
        si.idx.reserve(si.entries.size());
        std::size_t bytes = 0;
        for (const entry& e : si.entries) bytes += e.content.size();
        si.vocab.reserve(bytes);
        for (const entry& e : si.entries) {
            si.idx.push_back(make(si.vocab, e));
            if (e.created_at > si.last_timestamp) si.last_timestamp = e.created_at;
        }
        si.built_vocabulary = si.vocab.size();
        si.postings_dirty = true;
        si.ensure_postings(sim);
    }

    /// build() once updates and forgets have left the vocabulary mostly dead (see scope_index::stale).
    template <similarity_policy Similarity>
    void compact_if_stale(scope_index& si, const Similarity& sim) const {
        if (si.stale()) build(si, sim);
    }

private:
    /// Buffers one operation reuses, one set per thread: scopes are locked one by one, so two threads may
    /// index at once and each needs its own.
    struct scratch_space {
        std::vector<std::uint32_t> tokens, contains, numbers, tag_contains;
        id_buffer run_tokens, run_contains;  // index_fused
        epoch_set seen, runes_seen;
    };
    [[nodiscard]] static scratch_space& scratch() {
        thread_local scratch_space space;
        return space;
    }

    /// peek_rune, and also: the rune written lower-cased to out[pos..] and fed to the dedup stream as written
    /// (it folds case itself when asked to). A rune whose lower case has another UTF-8 length is not
    /// written: `resized` is set and the caller starts again on a separately lowered copy.
    template <class Dedup>
    [[gnu::always_inline]] static read_result read_rune(std::string_view in, std::size_t pos, char* out, Dedup& dedup,
                                                        bool& resized) noexcept {
        const auto b = static_cast<unsigned char>(in[pos]);
        if (b < 0x80) {  // ASCII: dedup_fold is lower-casing, white space is one of six bytes
            const auto c = static_cast<unsigned char>(b >= 'A' && b <= 'Z' ? b + 32 : b);
            out[pos] = static_cast<char>(c);
            if (b == ' ' || (b >= '\t' && b <= '\r')) dedup.space();
            else dedup.folded(dedup.fold ? c : b);
            const bool word = (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9');
            return {c, b, 1, word ? rune_kind::word : rune_kind::other};
        }
        const read_result r = peek_rune(in, pos);
        if (r.kind == rune_kind::invalid) {
            dedup.invalid(in.substr(pos, r.length));
        } else {
            if (r.c != r.original) {
                if (text::utf8_length(r.c) == r.length) text::encode_utf8(r.c, out + pos);
                else resized = true;
            }
            if (r.c > 0x3000 && r.c < 0xA000) dedup.folded(r.c);  // dedup_fold is the identity, none is a space
            else dedup.valid(r.original);
        }
        return r;
    }

    /// A dedup stream that ignores what it is fed (the second, pre-lowered pass of index_fused).
    struct no_dedup {
        bool fold = false;
        void space() noexcept {}
        void folded(std::uint32_t) noexcept {}
        void valid(char32_t) noexcept {}
        void invalid(std::string_view) noexcept {}
    };

    /// The reference tokenizer (see for_each_token_lowered) fused with everything else an entry's index
    /// needs, in one pass over the runes of `content`: the lower-cased copy (written in place), the dedup key,
    /// numbers (into scratch().numbers) and the word-run pair filter go into `x`; the token ids and the CJK
    /// containment ids, each once, are returned (they live in scratch buffers until the next call). When a
    /// rune's lower case is longer or shorter in UTF-8 (U+023A, U+1E9E, the Kelvin sign), the text is lowered
    /// into its own buffer first and the pass runs again over that.
    std::pair<std::span<const std::uint32_t>, std::span<const std::uint32_t>> index_fused(vocabulary& vocab,
                                                                                        std::string_view content,
                                                                                        indexed_entry& x) const {
        dedup_stream dedup{dedup_hash{}, fold_ == exact_duplicate_fold::width_and_case};
        x.lowered.assign(content);
        bool resized = false;
        auto spans = fused_pass(vocab, content, x, dedup, resized);
        if (!resized) {
            x.dedup = dedup.put.value;
            return spans;
        }
        scratch().numbers.clear();
        x.content_pairs = {};
        x.lowered = lower(content);
        no_dedup none;
        bool again = false;  // lower-casing is idempotent: nothing is rewritten in this pass
        spans = fused_pass(vocab, x.lowered, x, none, again);
        x.dedup = dedup_key(content, fold_);
        return spans;
    }

    template <class Dedup>
    std::pair<std::span<const std::uint32_t>, std::span<const std::uint32_t>> fused_pass(vocabulary& vocab,
                                                                                       std::string_view content,
                                                                                       indexed_entry& x, Dedup& dedup,
                                                                                       bool& resized) const {
        scratch_space& sc = scratch();
        const std::size_t n = content.size();
        char* const out = x.lowered.data();
        const char* const low = x.lowered.data();
        // Every rune adds at most two tokens and one containment id, and at most three new ids to the
        // dictionary: sized once here, the loop writes and dedups without branches (whether an id was seen
        // is unpredictable, and a mispredicted branch per rune cost more than the rest of the work).
        std::uint32_t* const tok = sc.run_tokens.reserve(2 * n + 8);
        std::uint32_t* const con = sc.run_contains.reserve(2 * n + 8);
        sc.seen.reserve(vocab.size() + 3 * n + 8);
        sc.runes_seen.reserve(vocab.size() + 3 * n + 8);
        // Tokens are deduplicated by `seen`, runes as containment ids by `rune_seen`.
        std::uint32_t* const seen = sc.seen.stamps();
        std::uint32_t* const rune_seen = sc.runes_seen.stamps();
        const std::uint32_t epoch = sc.seen.epoch(), rune_epoch = sc.runes_seen.epoch();
        std::size_t nt = 0, nc = 0;
        const auto token = [&](std::uint32_t id) {
            tok[nt] = id;
            nt += seen[id] != epoch;
            seen[id] = epoch;
        };

        constexpr std::size_t none = std::string_view::npos;
        std::size_t word = none;  // start of the word run being read
        const auto end_word = [&](std::size_t end) {
            if (word == none) return;
            const std::string_view w(low + word, end - word);
            const std::uint32_t id = vocab.word(w);
            if (seen[id] != epoch && all_digits(w)) sc.numbers.push_back(id);
            token(id);
            x.content_pairs.add(w);
            word = none;
        };

        std::size_t pos = 0;
        read_result r{};
        bool have = false;  // r is the rune at pos, read already
        while (pos < n) {
            if (!have) r = read_rune(content, pos, out, dedup, resized);
            have = false;
            if (r.kind == rune_kind::word) {
                if (word == none) word = pos;
                pos += r.length;
                continue;
            }
            end_word(pos);
            if (r.kind != rune_kind::cjk) {
                pos += r.length;
                continue;
            }
            // A CJK run: every bigram is a token, the runes of a run of one to three are tokens too, and
            // the other runes are containment ids.
            std::uint32_t singles[3];
            std::size_t run = 0;
            char32_t prev_cp = 0;
            for (;;) {
                const std::uint32_t one = vocab.rune(r.c);
                con[nc] = one;
                nc += rune_seen[one] != rune_epoch;
                rune_seen[one] = rune_epoch;
                if (run > 0) token(vocab.bigram(prev_cp, r.c));
                if (run < 3) singles[run] = one;
                ++run;
                prev_cp = r.c;
                pos += r.length;
                if (pos >= n) break;
                r = read_rune(content, pos, out, dedup, resized);
                if (r.kind != rune_kind::cjk) {
                    have = true;
                    break;
                }
            }
            if (run <= 3)
                for (std::size_t i = 0; i < run; ++i) token(singles[i]);
        }
        end_word(n);
        // Containment ids that are tokens too (the runes of short runs) are answered by the postings.
        std::size_t kept = 0;
        for (std::size_t i = 0; i < nc; ++i) {
            con[kept] = con[i];
            kept += seen[con[i]] != epoch;
        }
        nc = kept;
        sc.seen.clear();
        sc.runes_seen.clear();
        return {std::span<const std::uint32_t>(tok, nt), std::span<const std::uint32_t>(con, nc)};
    }

    /// Appends (once each, by `seen`) the ids of every CJK bigram and rune of `low`.
    static void add_cjk_ids(vocabulary& vocab, std::string_view low, std::vector<std::uint32_t>& out, epoch_set& seen) {
        char32_t prev = 0;  // the previous rune when it is CJK, else 0
        for (std::size_t pos = 0; pos < low.size();) {
            const auto r = text::decode_rune(low, pos);
            if (r.valid && is_cjk(r.value)) {
                const std::uint32_t one = vocab.rune(r.value);
                if (seen.insert(one)) out.push_back(one);
                if (prev != 0) {
                    const std::uint32_t two = vocab.bigram(prev, r.value);
                    if (seen.insert(two)) out.push_back(two);
                }
                prev = r.value;
            } else {
                prev = 0;
            }
            pos += r.length;
        }
    }

    const Tokenizer& tok_;
    exact_duplicate_fold fold_;
};

} // namespace ania::memory::detail

#if ANIA_HEADER_ONLY
#include <ania/memory/indexer-inl.hpp>
#endif
