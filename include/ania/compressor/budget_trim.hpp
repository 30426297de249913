// ania/compressor/budget_trim.hpp -- keep the system message and the newest suffix that fits a token budget.
// SPDX-License-Identifier: MIT
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

#include <ania/concepts.hpp>
#include <ania/context/token_counter.hpp>
#include <ania/message.hpp>

namespace ania {

/// Opt-in (not the spec's default). The semantics of LangChain's `trimMessages` with strategy "last",
/// includeSystem, startOn "human" and no partial messages: keep a leading system message and the longest
/// newest suffix whose tokens, with the system message's, fit the budget; then drop from the old end of that
/// suffix until it starts at a user message (so no tool exchange is split). With the window's cached counts
/// this is one binary search; without them the history is counted with `Counter` first.
template <token_counter Counter = char_class_counter>
struct budget_trim {
    std::int64_t budget_tokens = 32000;  ///< used when budget_fraction is 0
    double budget_fraction = 0.0;        ///< > 0: the budget is this fraction of the history's total tokens
    Counter counter{};

    /// Index of the first kept non-system message, given prefix sums over `h` (see compress_input).
    [[nodiscard]] std::size_t cut(std::span<const message> h, std::span<const std::int64_t> prefix) const noexcept {
        const std::size_t n = h.size();
        if (n == 0) return 0;
        const bool system = h[0].role == role::system;
        const std::size_t lo = system ? 1 : 0;
        const std::int64_t total = prefix[n] - prefix[0];
        const std::int64_t budget = budget_fraction > 0 ? static_cast<std::int64_t>(budget_fraction * static_cast<double>(total))
                                                        : budget_tokens;
        const std::int64_t remaining = budget - (system ? prefix[1] - prefix[0] : 0);
        // Smallest i >= lo with prefix[n] - prefix[i] <= remaining.
        const auto first = prefix.begin() + static_cast<std::ptrdiff_t>(lo);
        std::size_t i = remaining < 0 ? n
                                      : static_cast<std::size_t>(std::lower_bound(first, prefix.begin() + static_cast<std::ptrdiff_t>(n) + 1,
                                                                                  prefix[n] - remaining) - prefix.begin());
        i = std::min(i, n);
        while (i < n && h[i].role != role::user) ++i;
        return i;
    }

    [[nodiscard]] compression_result compress(const compress_input& in) const {
        const auto h = in.history;
        std::vector<std::int64_t> own;
        std::span<const std::int64_t> prefix = in.prefix_tokens;
        if (prefix.size() != h.size() + 1) {
            own.push_back(0);
            detail::append_prefix_counts(h, counter, own);
            prefix = own;
        }
        const std::size_t i = cut(h, prefix);
        const bool system = !h.empty() && h[0].role == role::system;
        if (i == (system ? 1u : 0u)) return compression_result::keep_suffix(0);  // everything fits
        compression_result r = compression_result::keep_suffix(i);
        if (system) r.prefix.push_back(h[0]);
        return r;
    }
};

static_assert(compressor<budget_trim<>> && compressor<budget_trim<token_counter_archetype>>);

} // namespace ania
