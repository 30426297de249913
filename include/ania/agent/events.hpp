// ania/agent/events.hpp -- typed events for every change an agent makes to a conversation's context.
// SPDX-License-Identifier: MIT
//
// Hooks (hooks.hpp) are the original's extension points; events are for observing: metrics, audit logs,
// tests. The agent hands each one to its event sink; the default sink, no_events, compiles to nothing.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <span>
#include <string_view>
#include <utility>

#include <ania/context/maybe_compress.hpp>  // compress_status
#include <ania/transcript.hpp>              // repair_report
#include <ania/usage.hpp>

namespace ania {

/// A compression ran (successfully, through its fallback, or failed and left the history as it was).
struct compression_event {
    enum class trigger : std::uint8_t {
        usage,      ///< the last request's reported prompt tokens passed the threshold
        estimate,   ///< no request measured yet (a restart, after a compression): the counter's estimate did
        tool_loop,  ///< inside a tool loop (window_options::check_inside_tool_loop)
        context_length,  ///< the provider refused the prompt as too long (failure_kind::context_length_exceeded)
    };
    std::string_view session;
    trigger why;
    compress_status status;
    std::int64_t tokens_before;  ///< the context size that made it due
    std::int64_t tokens_after;   ///< the estimate of the new history
    std::size_t messages_before, messages_after;
    std::size_t dropped;         ///< the oldest messages replaced (history[0, dropped) is gone)
    std::size_t prefix;          ///< new messages in front of what was kept (1 for a summary, 0 for a cut)
    bool fell_back;              ///< the primary compressor failed; the fallback (truncation) ran
    std::string_view error;      ///< the primary's failure, if any
    usage used;
    std::size_t edited = 0;      ///< messages replaced in place (tool results cleared by the ladder's first rung)
    /// What each rung of the compressor did, in order (a ladder's: default_compressor is one): which ran, which
    /// failed or was rejected and why, the tokens an edit removed. Empty for another compressor.
    std::span<const compression_step> steps{};
};

/// The transcript check changed something before it was sent or kept.
struct repair_event {
    enum class site : std::uint8_t {
        load,   ///< the stored history (rows skipped, another version, a crash mid-turn)
        reply,  ///< the model's reply (calls without ids, duplicate ids)
    };
    std::string_view session;
    site where;
    repair_report report;
    std::size_t ids_assigned;  ///< tool calls the model sent without a usable id, given one (reply only)
};

/// Loading the history failed: the conversation goes on in memory, from nothing.
struct persistence_event {
    std::string_view session;
    std::string_view error;
};

/// The base prompt and the tool schemas alone exceed the compression threshold (token_window::
/// fixed_over_threshold): compressing the history cannot bring the context under it, so the window waits until
/// the history part passes `history_budget`. Sent once per agent, and again only after it stopped being so.
/// Optional for a sink: one that does not take it is not sent it.
struct fixed_context_event {
    std::string_view session;
    std::int64_t fixed_tokens;        ///< the base prompt and tool schemas, estimated
    std::int64_t threshold;           ///< ratio x max_context_tokens
    std::int64_t max_context_tokens;
    std::int64_t history_budget;      ///< what the history may grow to before a compression runs
};

/// The default sink: every event is dropped at compile time.
struct no_events {
    template <class E>
    constexpr void operator()(const E&) const noexcept {}
};

/// Forwards every event to one function per type (unset ones are skipped); exceptions are caught by the agent.
struct event_functions {
    std::function<void(const compression_event&)> compression{};
    std::function<void(const repair_event&)> repair{};
    std::function<void(const persistence_event&)> persistence{};
    std::function<void(const fixed_context_event&)> fixed_context{};

    void operator()(const compression_event& e) const { if (compression) compression(e); }
    void operator()(const fixed_context_event& e) const { if (fixed_context) fixed_context(e); }
    void operator()(const repair_event& e) const { if (repair) repair(e); }
    void operator()(const persistence_event& e) const { if (persistence) persistence(e); }
};

} // namespace ania
