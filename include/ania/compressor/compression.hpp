// ania/compressor/compression.hpp -- what a compressor is given (compress_input) and what it answers (compression_result).
// SPDX-License-Identifier: MIT
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include <ania/message.hpp>
#include <ania/usage.hpp>

namespace ania {

/// What a compressor is given: the history, and (when the caller has them) its cached token counts as prefix
/// sums, size `history.size() + 1` (or empty): `prefix_tokens[j] - prefix_tokens[i]` = tokens of
/// `history[i..j)`. `prefix_tokens[0]` need not be 0.
struct compress_input {
    std::span<const message> history;
    std::span<const std::int64_t> prefix_tokens;
};

/// A compressor's answer. The new history is `prefix` followed by `history[keep_from..]`, so a truncation
/// is just an offset (no message is copied) and a summary is one new message. On failure (`ok == false`)
/// the history is left as it was; `used` counts the tokens spent either way.
struct compression_result {
    bool ok = false;
    std::size_t keep_from = 0;
    std::vector<message> prefix;
    ania::usage used;
    std::string error;

    // Built member by member: a braced {true, from, {}, {}, {}} costs 5x more here (GCC 12 materialises
    // and moves the empty members), and truncation is on the hot path.
    [[nodiscard]] static compression_result keep_suffix(std::size_t from) noexcept {
        compression_result r;
        r.ok = true;
        r.keep_from = from;
        return r;
    }
    [[nodiscard]] static compression_result failure(std::string why, ania::usage u = {}) noexcept {
        compression_result r;
        r.used = u;
        r.error = std::move(why);
        return r;
    }
};

} // namespace ania
