// ania/usage.hpp -- token usage of one LLM call and the statistics of one request (turn).
// SPDX-License-Identifier: MIT
#pragma once

#include <cstdint>
#include <optional>

namespace ania {

/// Token usage as the upstream reported it. Every field is optional on the wire; nullopt = not reported.
struct usage {
    std::optional<std::int64_t> prompt_tokens;
    std::optional<std::int64_t> completion_tokens;
    std::optional<std::int64_t> total_tokens;
    /// prompt_tokens_details.cached_tokens (OpenAI) or prompt_cache_hit_tokens (DeepSeek)
    std::optional<std::int64_t> cached_prompt_tokens;

    /// True when the upstream reported nothing at all.
    [[nodiscard]] bool empty() const noexcept {
        return !prompt_tokens && !completion_tokens && !total_tokens && !cached_prompt_tokens;
    }

    /// Field-wise sum, saturating at INT64_MAX (an upstream can report anything); a field stays nullopt only
    /// if it is nullopt on both sides.
    usage& operator+=(const usage& o) noexcept {
        const auto add = [](std::optional<std::int64_t>& a, const std::optional<std::int64_t>& b) {
            if (!b) return;
            std::int64_t sum = 0;
            a = __builtin_add_overflow(a.value_or(0), *b, &sum) ? (*b < 0 ? INT64_MIN : INT64_MAX) : sum;
        };
        add(prompt_tokens, o.prompt_tokens);
        add(completion_tokens, o.completion_tokens);
        add(total_tokens, o.total_tokens);
        add(cached_prompt_tokens, o.cached_prompt_tokens);
        return *this;
    }
    friend usage operator+(usage a, const usage& b) noexcept { return a += b; }
    friend bool operator==(const usage&, const usage&) = default;
};

/// What one request (a user turn with all its tool rounds) cost.
struct turn_stats {
    usage total;                        ///< summed over every LLM call of the request (compression excluded)
    std::int64_t last_prompt_tokens = 0; ///< prompt tokens of the request's *last* call: the context size
    int iterations = 0;                 ///< LLM calls (tool rounds) of the request; compression is not one
    usage compress_usage;               ///< tokens spent compressing the history during this request

    /// Records one LLM call of the request.
    void record_call(const usage& u) noexcept {
        total += u;
        ++iterations;
        if (u.prompt_tokens) last_prompt_tokens = *u.prompt_tokens;
    }
    /// Records tokens spent on compression: counted, but not an iteration.
    void record_compression(const usage& u) noexcept { compress_usage += u; }

    friend bool operator==(const turn_stats&, const turn_stats&) = default;
};

} // namespace ania
