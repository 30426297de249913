// ania/compressor/truncate_oldest_half.hpp -- the fallback: drop the oldest half, never leaving an orphan result.
// SPDX-License-Identifier: MIT
#pragma once

#include <algorithm>
#include <cstddef>
#include <span>

#include <ania/concepts.hpp>
#include <ania/message.hpp>

namespace ania {

/// SPEC §1 "Fallback", to the letter: keep = max(1, n/2), the cut starts at n - keep and then moves past every
/// tool message at its front (their assistant `tool_calls` are in the dropped half, and an orphan tool result
/// is an HTTP 400 forever after). The history may become empty, which is a valid new conversation.
/// O(1) plus the orphans skipped; never fails, never calls anything, stateless.
struct truncate_oldest_half {
    /// Index of the first kept message.
    [[nodiscard]] static std::size_t cut(std::span<const message> h) noexcept {
        const std::size_t n = h.size();
        if (n == 0) return 0;
        std::size_t start = n - std::max<std::size_t>(1, n / 2);
        while (start < n && h[start].role == role::tool) ++start;
        return start;
    }
    [[nodiscard]] compression_result compress(const compress_input& in) const {
        return compression_result::keep_suffix(cut(in.history));
    }
};

static_assert(compressor<truncate_oldest_half>);

} // namespace ania
