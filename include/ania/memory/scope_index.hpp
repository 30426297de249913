// ania/memory/scope_index.hpp -- one scope's memories and their index, with the invariants that tie them.
// SPDX-License-Identifier: MIT
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include <ania/detail/linkage.hpp>
#include <ania/memory/concepts.hpp>
#include <ania/memory/entry.hpp>
#include <ania/memory/index.hpp>

namespace ania::memory::detail {

/// The entries of one scope and what the searches read of them. Invariants (kept by the members below and by
/// the indexer, which alone fills `idx`):
/// - `idx[i]` describes `entries[i]`; both are oldest first; every id in `idx` is an id of `vocab`;
/// - `postings`, `cjk_content`, `cjk_tags`, `entry_weight`, `has_numbers` describe `idx` whenever
///   `postings_dirty` is false (they are rebuilt from the cached ids, never by re-tokenising);
/// - `last_timestamp` is the greatest created_at of the entries (new ones are stamped after it);
/// - `version` is the backend's version of the scope these entries are, for a versioned backend.
/// Not thread-safe: the manager holds the scope's lock around every use.
struct scope_index {
    static constexpr std::size_t npos = static_cast<std::size_t>(-1);
    static constexpr std::uint64_t stale_version = static_cast<std::uint64_t>(-1);

    std::vector<entry> entries;      // oldest first
    std::vector<indexed_entry> idx;  // parallel to entries
    vocabulary vocab;                // the ids in idx and in the postings
    postings_table postings;         // token id -> positions, ascending
    postings_table cjk_content;      // CJK bigram/rune id -> positions containing it but not as a token
    postings_table cjk_tags;         // ... -> one position per tag containing it
    std::vector<double> entry_weight;       // W(B) of each entry under the similarity policy
    std::vector<std::uint8_t> has_numbers;  // whether each entry has all-digit tokens
    bool postings_dirty = true;
    std::uint32_t built_vocabulary = 0;  // vocab.size() after the last full build
    std::string last_timestamp;
    std::uint64_t version = 0;

    [[nodiscard]] std::size_t find(std::string_view id) const noexcept;

    void push_back(entry e, indexed_entry x);
    void assign(std::size_t i, entry e, indexed_entry x);
    void erase(std::size_t i);

    /// Updates and forgets leave the ids of tokens no entry uses any more in the vocabulary (and in the
    /// postings' offsets); once those could be most of it, the scope should be indexed again.
    [[nodiscard]] bool stale() const noexcept { return vocab.size() > 2 * built_vocabulary + 4096; }

    /// Makes the postings and per-entry weights describe `idx` (under `sim`'s weights).
    template <similarity_policy Similarity>
    void ensure_postings(const Similarity& sim) {
        if (!postings_dirty) return;
        postings.build(vocab.size(), idx, &indexed_entry::tokens);
        cjk_content.build(vocab.size(), idx, &indexed_entry::cjk_contains);
        cjk_tags.build(vocab.size(), idx, &indexed_entry::cjk_tag_contains);
        const std::size_t n = idx.size();
        entry_weight.resize(n);
        has_numbers.resize(n);
        for (std::size_t i = 0; i < n; ++i) {
            const indexed_entry& e = idx[i];
            if constexpr (Similarity::weighted) {  // depends on every entry's tokens: recomputed on each change
                double w = 0;
                for (const std::uint32_t t : e.tokens()) w += sim.weight(postings.of(t).size(), n);
                entry_weight[i] = w;
            } else {
                entry_weight[i] = static_cast<double>(e.token_end);
            }
            has_numbers[i] = !e.numbers().empty();
        }
        postings_dirty = false;
    }
};

} // namespace ania::memory::detail

#if ANIA_HEADER_ONLY
#include <ania/memory/scope_index-inl.hpp>
#endif
