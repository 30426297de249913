// ania/context/token_counter.hpp -- estimating tokens when the upstream reports no usage.
// SPDX-License-Identifier: MIT
#pragma once

#include <algorithm>
#include <array>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <span>
#include <string_view>
#include <vector>

#include <ania/detail/linkage.hpp>
#include <ania/concepts.hpp>
#include <ania/detail/simd.hpp>
#include <ania/message.hpp>

namespace ania {

namespace detail {

/// Code points of valid UTF-8 (bytes that are not continuation bytes), by detail::count_continuation (32
/// bytes a step where the CPU has AVX2, else 8). Messages inside ania are valid UTF-8 (repaired at every boundary), so this equals
/// text::rune_count there.
[[nodiscard]] ANIA_INLINE std::size_t count_runes_fast(std::string_view s) noexcept;

/// Per-byte weights of the character-class estimate, in twentieths of a token.
struct char_class_table {
    std::array<std::uint8_t, 256> weight{};
    constexpr char_class_table() {
        for (int b = 0; b < 256; ++b) {
            std::uint8_t w;
            if (b >= 'a' && b <= 'z') w = 5;                                   // ASCII letter 0.25
            else if (b >= 'A' && b <= 'Z') w = 5;
            else if (b >= '0' && b <= '9') w = 10;                             // digit 0.5
            else if (b == ' ' || (b >= '\t' && b <= '\r')) w = 2;              // whitespace 0.1
            else if (b >= 0x21 && b <= 0x7E) w = 14;                           // ASCII punctuation 0.7
            else if (b < 0x80) w = 20;                                         // control: other 1.0
            else if ((b & 0xC0) == 0x80) w = 0;                                // continuation: counted at the lead
            else w = 20;                                                       // CJK and other 1.0
            weight[static_cast<std::size_t>(b)] = w;
        }
    }
};
inline constexpr char_class_table char_class_weights{};

} // namespace detail

/// The default estimate (tokens per rune: CJK 1.0, ASCII letter 0.25, digit 0.5, ASCII punctuation 0.7,
/// whitespace 0.1, other 1.0; +4 per message; tool-call name + arguments + 8 per call; a fixed cost per image).
/// Measured against o200k, cl100k, DeepSeek-V3 and Qwen3 tokenizers it over-estimates by at most 1.2-1.5x
/// and under-estimates by 0.8x at worst (cl100k, dense Chinese). Stateless, thread-safe, noexcept.
struct char_class_counter {
    std::int64_t per_message = 4;
    std::int64_t per_tool_call = 8;
    std::int64_t per_image = 1000;

    /// Tokens of a text, rounded up; in twentieths before rounding so that short texts are not lost.
    [[nodiscard]] static std::int64_t twentieths(std::string_view s) noexcept;
    [[nodiscard]] static std::int64_t text_tokens(std::string_view s) noexcept { return (twentieths(s) + 19) / 20; }

    [[nodiscard]] std::int64_t count(const message& m) const noexcept;
};

/// The original's rule: about two characters per token. Per message: 4 + (runes of content, reasoning,
/// tool-call names and arguments) / 2, plus a fixed cost per image. It is off by 0.42x-2.36x against real
/// tokenizers; it is here for compatibility and because the shared golden files use it.
struct half_char_counter {
    std::int64_t per_message = 4;
    std::int64_t per_image = 1000;

    [[nodiscard]] std::int64_t count(const message& m) const noexcept;
};

/// Learns the ratio between the prompt tokens the upstream reports and `Base`'s estimate of the same request
/// (exponential moving average, clamped), and scales estimates by it whenever usage is missing later.
/// Not thread-safe: it belongs to one window.
template <token_counter Base = char_class_counter>
class calibrated_counter {
public:
    calibrated_counter() : calibrated_counter(Base{}) {}
    explicit calibrated_counter(Base base, double smoothing = 0.3, double min_ratio = 0.5, double max_ratio = 3.0)
        : base_(std::move(base)), alpha_(smoothing), min_(min_ratio), max_(max_ratio) {}

    [[nodiscard]] std::int64_t count(const message& m) const noexcept(noexcept(base_.count(m))) { return base_.count(m); }

    /// A raw estimate (a sum of count()) scaled by the learned ratio.
    [[nodiscard]] std::int64_t scale(std::int64_t raw) const noexcept {
        return static_cast<std::int64_t>(static_cast<double>(raw) * ratio_ + 0.5);
    }
    /// One observation: `estimated` raw tokens for a request whose reported prompt size was `reported`.
    void observe(std::int64_t estimated, std::int64_t reported) noexcept {
        if (estimated <= 0 || reported <= 0) return;
        const double r = std::clamp(static_cast<double>(reported) / static_cast<double>(estimated), min_, max_);
        ratio_ = samples_++ == 0 ? r : ratio_ + alpha_ * (r - ratio_);
    }
    [[nodiscard]] double ratio() const noexcept { return ratio_; }
    [[nodiscard]] std::size_t samples() const noexcept { return samples_; }

private:
    Base base_;
    double alpha_, min_, max_;
    double ratio_ = 1.0;
    std::size_t samples_ = 0;
};

namespace detail {
/// Appends running sums of `c.count(m)` over `ms` to `prefix` (which holds at least one element). Message
/// bodies are separate heap blocks, so counting a long history waits on memory: the text of the message a
/// few places ahead is prefetched (about 15% faster on 100k messages).
template <token_counter C>
void append_prefix_counts(std::span<const message> ms, const C& c, std::vector<std::int64_t>& prefix) {
    constexpr std::size_t ahead = 8;
    prefix.reserve(prefix.size() + ms.size());
    for (std::size_t i = 0; i < ms.size(); ++i) {
        if (i + ahead < ms.size()) {
            const message& next = ms[i + ahead];
            __builtin_prefetch(next.content.data());
            if (next.content.size() > 64) __builtin_prefetch(next.content.data() + 64);
            if (!next.tool_calls.empty()) __builtin_prefetch(next.tool_calls.data());
        }
        prefix.push_back(prefix.back() + static_cast<std::int64_t>(c.count(ms[i])));
    }
}
} // namespace detail

static_assert(token_counter<char_class_counter>);
static_assert(token_counter<half_char_counter>);
static_assert(calibrating_token_counter<calibrated_counter<>>);
static_assert(calibrating_token_counter<calibrated_counter<token_counter_archetype>>);

} // namespace ania

#if ANIA_HEADER_ONLY
#include <ania/context/token_counter-inl.hpp>
#endif
