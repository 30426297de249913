// ania/memory/near_duplicate.hpp -- how alike a new text is to each memory of a scope (SPEC §4 dedup).
// SPDX-License-Identifier: MIT
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <ania/memory/concepts.hpp>
#include <ania/memory/indexer.hpp>
#include <ania/memory/options.hpp>
#include <ania/memory/scope_index.hpp>
#include <ania/memory/tokenize.hpp>

namespace ania::memory::detail {

/// The near-duplicate check: the candidate's token set against every entry's, through the scope's postings
/// (never re-tokenising the scope), scored by the similarity policy. The candidate's tokens are looked up in
/// the vocabulary as they are read and never added to it. Buffers are per thread: a check allocates nothing
/// once they have grown.
template <memory_tokenizer Tokenizer>
class near_duplicate_finder {
public:
    explicit near_duplicate_finder(const Tokenizer& tok) noexcept : tok_(tok) {}

    /// The best match (ties: the oldest), whether it reaches the threshold, and up to three entries that do,
    /// best first. `content` is the text as it would be stored.
    template <similarity_policy Similarity>
    near_duplicate_report check(scope_index& si, const Similarity& sim, std::string_view content) const {
        scratch_space& sc = scratch();
        si.ensure_postings(sim);
        near_duplicate_report rep;
        const std::size_t n = si.entries.size();
        if (n == 0) return rep;
        // Folding white space never changes tokens (white space only separates), so it is skipped here.
        // Candidate tokens: known ids (each once) and unknown ones (counted only).
        std::vector<std::uint32_t>& known = sc.known;
        std::vector<std::uint32_t>& cand_numbers = sc.cand_numbers;
        known.clear();
        cand_numbers.clear();
        std::size_t unknown = 0;
        bool cand_unknown_number = false;  // a number no stored entry has ever contained
        if constexpr (cjk_bigram_compatible<Tokenizer>) {
            reference_tokens(si.vocab, content, unknown, cand_unknown_number);
        } else {
            const std::string low = lower(content);
            std::vector<std::string_view> unknown_tokens;
            sc.seen.reserve(si.vocab.size());
            tok_(low, [&](std::string_view t) {
                if (const auto id = si.vocab.find(t)) {
                    if (sc.seen.insert(*id)) {
                        known.push_back(*id);
                        if (all_digits(t)) cand_numbers.push_back(*id);
                    }
                } else {
                    unknown_tokens.push_back(t);
                }
            });
            sc.seen.clear();
            std::sort(unknown_tokens.begin(), unknown_tokens.end());
            unknown_tokens.erase(std::unique(unknown_tokens.begin(), unknown_tokens.end()), unknown_tokens.end());
            unknown = unknown_tokens.size();
            cand_unknown_number = std::any_of(unknown_tokens.begin(), unknown_tokens.end(), all_digits);
        }
        std::sort(cand_numbers.begin(), cand_numbers.end());
        const bool cand_has_numbers = cand_unknown_number || !cand_numbers.empty();

        std::vector<double>& inter = sc.inter;
        std::vector<std::uint32_t>& counts = sc.counts;
        double wa = 0;
        const auto df = [&](std::uint32_t t) { return si.postings.of(t).size(); };
        if constexpr (Similarity::weighted) {
            inter.assign(n, 0.0);
            for (const std::uint32_t t : known) {
                const double w = sim.weight(df(t), n);
                wa += w;
                for (const std::uint32_t pos : si.postings.of(t)) inter[pos] += w;
            }
        } else {  // unit weights: count in integers
            counts.assign(n, 0);
            for (const std::uint32_t t : known)
                for (const std::uint32_t pos : si.postings.of(t)) ++counts[pos];
            wa = static_cast<double>(known.size());
        }
        wa += static_cast<double>(unknown) * sim.weight(0, n);
        // Per entry only compact arrays are read (W(B) and whether it holds numbers), not the entries' index.
        const double* const wb = si.entry_weight.data();
        const std::uint8_t* const has_numbers = si.has_numbers.data();
        std::size_t best = 0;
        double best_score = -1;
        std::vector<std::pair<std::size_t, double>>& similar = sc.similar;
        similar.clear();
        for (std::size_t i = 0; i < n; ++i) {
            const bool numbers_differ = cand_has_numbers && has_numbers[i] &&
                                        (cand_unknown_number || !std::ranges::equal(si.idx[i].numbers(), cand_numbers));
            double in;
            if constexpr (Similarity::weighted) in = inter[i];
            else in = static_cast<double>(counts[i]);
            const double score = sim.score(in, wa, wb[i], numbers_differ);
            if (score > best_score) {  // ties: the oldest
                best = i;
                best_score = score;
            }
            if (score >= sim.threshold) similar.emplace_back(i, score);
        }
        rep.best = similar_entry{best, si.entries[best].id, best_score};
        std::stable_sort(similar.begin(), similar.end(), [](const auto& a, const auto& b) { return a.second > b.second; });
        for (std::size_t k = 0; k < similar.size() && k < 3; ++k)
            rep.similar.push_back({similar[k].first, si.entries[similar[k].first].id, similar[k].second});
        rep.is_duplicate = best_score >= sim.threshold;
        return rep;
    }

private:
    struct scratch_space {
        std::vector<double> inter;
        std::vector<std::uint32_t> counts, known, cand_numbers;
        std::vector<std::pair<std::size_t, double>> similar;
        std::vector<std::uint64_t> unknown_cjk;
        std::string words;
        std::vector<std::pair<std::uint32_t, std::uint32_t>> unknown_words;
        std::vector<std::string_view> views;
        epoch_set seen;
    };
    [[nodiscard]] static scratch_space& scratch() {
        thread_local scratch_space space;
        return space;
    }

    /// The reference tokenizer's tokens of a candidate text, looked up in `vocab` as they are read (CJK by
    /// code points; words lower-cased into a scratch buffer): known ids, each once, into known (all-digit
    /// ones also into cand_numbers); the distinct unknown tokens are counted.
    static void reference_tokens(const vocabulary& vocab, std::string_view content, std::size_t& unknown,
                                 bool& unknown_number) {
        scratch_space& sc = scratch();
        sc.seen.reserve(vocab.size());
        std::vector<std::uint64_t>& unknown_cjk = sc.unknown_cjk;  // rune: 1 << 63 | cp; bigram: a << 21 | b
        std::string& words = sc.words;                            // lowered words, unknown ones kept
        std::vector<std::pair<std::uint32_t, std::uint32_t>>& unknown_words = sc.unknown_words;
        unknown_cjk.clear();
        words.clear();
        unknown_words.clear();
        const auto found = [&](std::optional<std::uint32_t> id) {
            if (id && sc.seen.insert(*id)) sc.known.push_back(*id);
            return id.has_value();
        };
        std::size_t word = std::string::npos;  // start of the current word in `words`
        const auto end_word = [&] {
            if (word == std::string::npos) return;
            const std::string_view w = std::string_view(words).substr(word);
            const auto id = vocab.find_word(w);
            if (id) {
                if (sc.seen.insert(*id)) {
                    sc.known.push_back(*id);
                    if (all_digits(w)) sc.cand_numbers.push_back(*id);
                }
                words.resize(word);
            } else {
                unknown_words.emplace_back(static_cast<std::uint32_t>(word), static_cast<std::uint32_t>(w.size()));
                unknown_number = unknown_number || all_digits(w);
            }
            word = std::string::npos;
        };
        char32_t run[3];  // the first runes of the current CJK run
        std::size_t run_length = 0;
        const auto end_run = [&] {
            if (run_length >= 1 && run_length <= 3)
                for (std::size_t i = 0; i < run_length; ++i)
                    if (!found(vocab.find_rune(run[i]))) unknown_cjk.push_back(std::uint64_t{1} << 63 | run[i]);
            run_length = 0;
        };
        char32_t prev = 0;
        for (std::size_t pos = 0; pos < content.size();) {
            const read_result r = peek_rune(content, pos);
            if (r.kind == rune_kind::cjk) {
                end_word();
                if (run_length > 0 && !found(vocab.find_bigram(prev, r.c))) unknown_cjk.push_back(std::uint64_t{prev} << 21 | r.c);
                if (run_length < 3) run[run_length] = r.c;
                ++run_length;
                prev = r.c;
            } else if (r.kind == rune_kind::word) {
                end_run();
                if (word == std::string::npos) word = words.size();
                if (r.length == 1 && r.c < 0x80) words.push_back(static_cast<char>(r.c));
                else text::append_utf8(words, r.c);
            } else {
                end_run();
                end_word();
            }
            pos += r.length;
        }
        end_run();
        end_word();
        sc.seen.clear();
        std::sort(unknown_cjk.begin(), unknown_cjk.end());
        unknown = static_cast<std::size_t>(std::unique(unknown_cjk.begin(), unknown_cjk.end()) - unknown_cjk.begin());
        std::vector<std::string_view>& views = sc.views;
        views.clear();
        for (const auto& [at, length] : unknown_words) views.emplace_back(std::string_view(words).substr(at, length));
        std::sort(views.begin(), views.end());
        unknown += static_cast<std::size_t>(std::unique(views.begin(), views.end()) - views.begin());
    }

    const Tokenizer& tok_;
};

} // namespace ania::memory::detail
