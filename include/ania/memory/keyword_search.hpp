// ania/memory/keyword_search.hpp -- memory_search's scores (SPEC §4): keywords in content and tags, and vectors.
// SPDX-License-Identifier: MIT
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <unordered_set>
#include <vector>

#include <ania/detail/dot.hpp>
#include <ania/memory/concepts.hpp>
#include <ania/memory/indexer.hpp>
#include <ania/memory/scope_index.hpp>
#include <ania/memory/tokenize.hpp>

namespace ania::memory::detail {

/// The score of every entry of `si` for a query (oldest first): +10 when the lower-cased content contains a
/// term of the query, +20 for every tag containing it, and when both vectors exist the original's semantic
/// bonus int(cosine x 40) when it is at least 1 (a bonus: a negative cosine never takes a keyword hit away).
/// Terms are the tokenizer's tokens of the lower-cased query, each once. CJK terms are answered by the
/// containment postings (exact); word terms through a pair filter, then a real substring search. The
/// postings must be current (scope_index::ensure_postings).
template <memory_tokenizer Tokenizer>
[[nodiscard]] std::vector<double> keyword_scores(const scope_index& si, const Tokenizer& tok, std::string_view query,
                                                 const std::vector<float>& qvec) {
    const std::string low = lower(query);
    // Distinct terms in first-seen order. A short query (the usual: a few words) is deduplicated by a scan;
    // past 32 terms by a hash set, so that 10^5 distinct words never cost 10^10 comparisons.
    constexpr std::size_t scan_max = 32;
    std::vector<std::string_view> terms;
    std::unordered_set<std::string_view> seen_terms;
    tok(low, [&](std::string_view t) {
        if (terms.size() < scan_max) {
            if (std::find(terms.begin(), terms.end(), t) != terms.end()) return;
            terms.push_back(t);
            if (terms.size() == scan_max) seen_terms.insert(terms.begin(), terms.end());
        } else if (seen_terms.insert(t).second) {
            terms.push_back(t);
        }
    });
    const std::size_t n = si.entries.size();
    std::vector<double> out(n, 0.0);
    for (const std::string_view term : terms) {
        if (is_cjk(text::decode_rune(term, 0).value) && text::rune_count(term) <= 2 && all_cjk(term)) {
            // CJK bigrams and runes: the containment index is exact (see indexed_entry).
            const auto id = si.vocab.find(term);
            if (!id) continue;  // no entry's text has it
            for (const std::uint32_t pos : si.postings.of(*id)) out[pos] += 10;  // disjoint from the next
            for (const std::uint32_t pos : si.cjk_content.of(*id)) out[pos] += 10;
            for (const std::uint32_t pos : si.cjk_tags.of(*id)) out[pos] += 20;
            continue;
        }
        // Word terms may sit inside longer words ("file" in "profile"): a pair filter, then a real search.
        // Other terms (a custom tokenizer's) are searched for in every entry.
        pair_filter f;
        if (pair_filter::is_word_run(term)) f.add(term);
        const auto bits = f.sparse();  // empty: every entry passes
        for (std::size_t i = 0; i < n; ++i) {
            const indexed_entry& x = si.idx[i];
            if (x.content_pairs.has(bits) && x.lowered.find(term) != std::string::npos) out[i] += 10;
            if (!x.lowered_tags.empty() && x.tag_pairs.has(bits))
                for (const std::string& tag : x.lowered_tags)
                    if (tag.find(term) != std::string::npos) out[i] += 20;
        }
    }
    if (!qvec.empty()) {
        const float qnorm = norm_of(qvec);
        for (std::size_t i = 0; i < n; ++i) {
            const auto& v = si.entries[i].embedding;
            if (qnorm > 0 && si.idx[i].norm > 0 && v.size() == qvec.size()) {
                const double cosine = ania::detail::dot(qvec, v) / (qnorm * si.idx[i].norm);
                // The original's int(sim*40) when sim > 0: nothing below 1 (a negative cosine included), else
                // the truncation, which is the floor of a positive number (std::floor is a libm call here).
                if (const double bonus = cosine * 40.0; bonus >= 1.0) out[i] += static_cast<double>(static_cast<int>(bonus));
            }
        }
    }
    return out;
}

} // namespace ania::memory::detail
