// ania/compressor/default_compressor.hpp -- the spec's compressor: an LLM summary, else drop the oldest half;
// optionally preceded by the cheap rung that clears old tool results.
// SPDX-License-Identifier: MIT
#pragma once

#include <concepts>
#include <utility>

#include <ania/detail/linkage.hpp>
#include <ania/compressor/clear_tool_results.hpp>
#include <ania/compressor/ladder.hpp>
#include <ania/compressor/llm_summary.hpp>
#include <ania/compressor/truncate_oldest_half.hpp>

namespace ania {

/// SPEC §1 as one type: `llm_summary<Client>` (by the compression client when one is given, else by the
/// main client), falling back to `truncate_oldest_half` when the summary fails — so a compression can never
/// block a conversation (a bare llm_summary leaves an over-budget history as it is when the model is down).
/// It is the ladder `clear_tool_results → llm_summary → truncate_oldest_half` whose first rung is off unless
/// given options with `enabled` (config: `compressor.clear_tool_results.*`): off, it is the spec's two rungs.
template <chat_client Client>
class default_compressor : public ladder<clear_tool_results, llm_summary<Client>, truncate_oldest_half> {
    using base = ladder<clear_tool_results, llm_summary<Client>, truncate_oldest_half>;

public:
    using shared_options = typename llm_summary<Client>::shared_options;

    // The constructors and the destructor are out of line under g++: inlined into the code that moves a client
    // out of, or destroys, a disengaged std::optional (basic_agent::parts), g++ 12 at -O2 reports the shared
    // pointers inside "maybe uninitialized" (the std::optional false positive, GCC PR 80635) -- an error under
    // -Werror in the user's build.

    /// llm_summary's constructors: (main[, compression][, options]); the first rung off.
    template <class... Args>
        requires std::constructible_from<llm_summary<Client>, Args...>
    ANIA_GCC_NOINLINE explicit default_compressor(Args&&... args)
        : base(clear_tool_results(off()), llm_summary<Client>(std::forward<Args>(args)...), truncate_oldest_half{}) {}
    /// The same with the first rung's options.
    template <class... Args>
        requires std::constructible_from<llm_summary<Client>, Args...>
    ANIA_GCC_NOINLINE explicit default_compressor(clear_tool_results_options clear, Args&&... args)
        : base(clear_tool_results(std::move(clear)), llm_summary<Client>(std::forward<Args>(args)...), truncate_oldest_half{}) {}

    ANIA_GCC_NOINLINE ~default_compressor() {}
    default_compressor(const default_compressor&) = default;
    default_compressor(default_compressor&&) = default;
    default_compressor& operator=(const default_compressor&) = default;
    default_compressor& operator=(default_compressor&&) = default;

    [[nodiscard]] clear_tool_results& clearing() noexcept { return this->template rung<0>(); }
    [[nodiscard]] llm_summary<Client>& primary() noexcept { return this->template rung<1>(); }
    [[nodiscard]] truncate_oldest_half& fallback() noexcept { return this->template rung<2>(); }

private:
    static clear_tool_results_options off() {
        clear_tool_results_options o;
        o.enabled = false;
        return o;
    }
};
static_assert(compressor<default_compressor<chat_client_archetype>>);

} // namespace ania
