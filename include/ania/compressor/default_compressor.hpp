// ania/compressor/default_compressor.hpp -- the spec's compressor: an LLM summary, else drop the oldest half.
// SPDX-License-Identifier: MIT
#pragma once

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

    explicit default_compressor(Client main) : base(std::in_place, std::move(main)) {}
    default_compressor(Client main, summary_options opt) : base(std::in_place, std::move(main), std::move(opt)) {}
    default_compressor(Client main, shared_options opt) : base(std::in_place, std::move(main), std::move(opt)) {}
    default_compressor(Client main, Client compression) : base(std::in_place, std::move(main), std::move(compression)) {}
    default_compressor(Client main, Client compression, summary_options opt)
        : base(std::in_place, std::move(main), std::move(compression), std::move(opt)) {}
    default_compressor(Client main, Client compression, shared_options opt)
        : base(std::in_place, std::move(main), std::move(compression), std::move(opt)) {}
};
static_assert(compressor<default_compressor<chat_client_archetype>>);

} // namespace ania
