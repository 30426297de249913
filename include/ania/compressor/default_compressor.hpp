// ania/compressor/default_compressor.hpp -- the spec's compressor: an LLM summary, else drop the oldest half.
// SPDX-License-Identifier: MIT
#pragma once

#include <concepts>
#include <utility>

#include <ania/compressor/llm_summary.hpp>
#include <ania/compressor/truncate_oldest_half.hpp>
#include <ania/compressor/with_fallback.hpp>

namespace ania {

/// SPEC §1 as one type: `llm_summary<Client>` (by the compression client when one is given, else by the
/// main client), falling back to `truncate_oldest_half` when the summary fails — so a compression can never
/// block a conversation (a bare llm_summary leaves an over-budget history as it is when the model is down).
template <chat_client Client>
class default_compressor : public with_fallback<llm_summary<Client>, truncate_oldest_half> {
    using base = with_fallback<llm_summary<Client>, truncate_oldest_half>;

public:
    using shared_options = typename llm_summary<Client>::shared_options;

    /// llm_summary's constructors: (main[, compression][, options]), the summary built in place.
    template <class... Args>
        requires std::constructible_from<llm_summary<Client>, Args...>
    explicit default_compressor(Args&&... args) : base(std::in_place, std::forward<Args>(args)...) {}
};
static_assert(compressor<default_compressor<chat_client_archetype>>);

} // namespace ania
