// ania/compressor/with_fallback.hpp -- try one compressor, and another when it fails.
// SPDX-License-Identifier: MIT
#pragma once

#include <utility>

#include <ania/concepts.hpp>

namespace ania {

/// Runs `Primary`; when it fails, runs `Fallback` on the same input. The tokens both spent are counted.
/// When the fallback was used and succeeded, `error` still says why the primary failed (for the log).
/// The spec's behaviour is `with_fallback<llm_summary<Client>, truncate_oldest_half>`.
template <compressor Primary, compressor Fallback>
class with_fallback {
public:
    explicit with_fallback(Primary primary = {}, Fallback fallback = {})
        : primary_(std::move(primary)), fallback_(std::move(fallback)) {}
    /// The primary built in place from `args` (no move of it), the fallback default-constructed.
    template <class... Args>
    explicit with_fallback(std::in_place_t, Args&&... args) : primary_(std::forward<Args>(args)...), fallback_() {}

    [[nodiscard]] compression_result compress(const compress_input& in) {
        compression_result first = primary_.compress(in);
        if (first.ok) return first;
        compression_result second = fallback_.compress(in);
        second.used += first.used;
        second.error = second.ok ? std::move(first.error) : first.error + "; fallback: " + second.error;
        return second;
    }

    [[nodiscard]] Primary& primary() noexcept { return primary_; }
    [[nodiscard]] Fallback& fallback() noexcept { return fallback_; }

private:
    Primary primary_;
    Fallback fallback_;
};
static_assert(compressor<with_fallback<compressor_archetype, compressor_archetype>>);

} // namespace ania
