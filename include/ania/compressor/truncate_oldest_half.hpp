// ania/compressor/truncate_oldest_half.hpp -- the fallback: drop the oldest half, never leaving an orphan result.
// SPDX-License-Identifier: MIT
#pragma once

#include <algorithm>
#include <cstddef>
#include <span>
#include <string_view>

#include <ania/detail/linkage.hpp>
#include <ania/concepts.hpp>
#include <ania/message.hpp>

namespace ania {

/// SPEC §1 "Fallback", to the letter: keep = max(1, n/2), the cut starts at n - keep and then moves past every
/// tool message at its front (their assistant `tool_calls` are in the dropped half, and an orphan tool result
/// is an HTTP 400 forever after). The history may become empty, which is a valid new conversation.
/// O(1) plus the orphans skipped; never fails, never calls anything, stateless.
struct truncate_oldest_half {
    static constexpr std::string_view name = "truncate_oldest_half";
    /// Index of the first kept message.
    [[nodiscard]] static std::size_t cut(std::span<const message> h) noexcept;
    [[nodiscard]] compression_result compress(const compress_input& in) const;
};

static_assert(compressor<truncate_oldest_half>);

} // namespace ania

#if ANIA_HEADER_ONLY
#include <ania/compressor/truncate_oldest_half-inl.hpp>
#endif
