// ania/context/window_options.hpp -- when a token window's compression is due and when it is checked.
// SPDX-License-Identifier: MIT
#pragma once

#include <cstdint>

#include <ania/defaults.hpp>

namespace ania {

/// When compression is due and when it is checked; `from_config<window_options>(cfg)` (config.hpp) reads
/// max_context_tokens and compress_ratio.
struct window_options {
    std::int64_t max_context_tokens = defaults::max_context_tokens;  ///< <= 0 disables compression
    double compress_ratio = defaults::compress_ratio;  ///< due once the context exceeds ratio x max_context_tokens
    /// The spec checks before the next round only; true also checks before every LLM call inside a tool
    /// loop, so that one long tool loop cannot overflow the context within a single turn.
    bool check_inside_tool_loop = false;
    /// Keep each committed message's request bytes once written (wire_cache.hpp), so a request costs the
    /// turn, not the history; about the messages' JSON size in memory. false writes every request whole.
    bool wire_cache = true;
};

} // namespace ania
