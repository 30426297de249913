// ania/agent/options.hpp -- the options of an agent (values; `from_config<agent_options>(cfg)` in
// <ania/config/from_config.hpp> fills the window's from the configuration).
// SPDX-License-Identifier: MIT
#pragma once

#include <cstddef>
#include <functional>
#include <memory>
#include <string>
#include <string_view>

#include <ania/agent/tool_registry.hpp>
#include <ania/compressor/clear_tool_results.hpp>
#include <ania/compressor/llm_summary.hpp>
#include <ania/context/window_options.hpp>
#include <ania/history/persist.hpp>
#include <ania/transcript.hpp>

namespace ania {

/// The options of an agent: one conversation's, or (shared, read-only) every session's of a bot. The session's
/// key is not an option: it is given to the agent's constructor.
struct agent_options {
    std::string system_prompt{};  ///< the base prompt: the request's system message, never stored
    window_options window{};    ///< from_config<window_options>(cfg): max_context_tokens, compress_ratio
    int max_iterations = 20;    ///< LLM calls per turn (tool rounds), as the original
    /// Calls past this many in one reply are answered with tool_texts::too_many_calls, not run: a model
    /// that sends 80,000 calls costs 80,000 short answers, not 80,000 tool runs.
    std::size_t max_tool_calls_per_reply = 128;
    std::size_t post_tool_use_runes = 1000;  ///< PostToolUse sees the result cut to this many code points
    tool_texts tool_replies{};
    persist_options persist{};  ///< the image marker; unanswered calls of a cut turn get "[cancelled]"
    repair_options repair{};    ///< how a stored history and a reply are repaired
    /// memory.auto_inject and the like: called with (session, user text) before each turn; a non-empty answer
    /// is one more injection of that turn (see chat_options::injections).
    std::function<std::string(std::string_view session, std::string_view text)> auto_inject{};
    /// The spec's compressor (Traits::compressor = spec_compressor) as configured: the summary's options
    /// (language, checks, breaker; null = the defaults) and the cheap rung before it (off unless `enabled`).
    /// A compressor passed in parts::compressor ignores both.
    std::shared_ptr<const summary_options> summary{};
    /// Non-destructive compaction (history.archive.enabled): what a summary or a cut removes from the history
    /// goes to the session's archive (the store must be an archiving_store: ram_store, sqlite_store,
    /// postgres_store), where history_search / history_get (<ania/history/archive_search.hpp>) find it.
    bool archive = false;
    clear_tool_results_options clear_tool_results = [] {
        clear_tool_results_options o;
        o.enabled = false;
        return o;
    }();
};

} // namespace ania
