// ania/config/from_config.hpp -- the one bridge from the configuration to the parts' options: from_config<T>(cfg)
// for the core's options (window, memory, sessions, agent). The clients' are in <ania/config/clients.hpp>,
// PostgreSQL's in <ania/config/postgres.hpp>. This room includes the option headers; none of them includes it.
// SPDX-License-Identifier: MIT
#pragma once

#include <chrono>
#include <cstddef>
#include <memory>

#include <ania/agent/options.hpp>
#include <ania/concepts.hpp>
#include <ania/config/config.hpp>
#include <ania/context/window_options.hpp>
#include <ania/memory/options.hpp>
#include <ania/session/options.hpp>

namespace ania {

/// The options of a part as the configuration says: `from_config<window_options>(cfg)`,
/// `from_config<memory::manager_options>(cfg)`, `from_config<openai::client_options>(cfg, model_role::compression)`.
/// Keys the configuration does not have keep the options' own defaults (which are the configuration's: see
/// defaults.hpp). A part of your own gets its reader by specialising one of the two.
template <class Options>
[[nodiscard]] Options from_config(const config& c) = delete;
template <class Options>
[[nodiscard]] Options from_config(const config& c, model_role role) = delete;

/// max_context_tokens, compress_ratio, wire_cache.
template <>
[[nodiscard]] inline window_options from_config<window_options>(const config& c) {
    window_options o;
    o.max_context_tokens = c.max_context_tokens;
    o.compress_ratio = c.compress_ratio;
    o.wire_cache = c.wire_cache;
    return o;
}

/// The window's limits (max_context_tokens, compress_ratio); the rest is the caller's (prompt, tools, hooks).
template <>
[[nodiscard]] inline agent_options from_config<agent_options>(const config& c) {
    agent_options o;
    o.window = from_config<window_options>(c);
    const auto& ct = c.compressor.clear_tool_results;
    o.clear_tool_results.enabled = ct.enabled;
    o.clear_tool_results.trigger = ct.trigger;
    o.clear_tool_results.keep = static_cast<std::size_t>(ct.keep);
    o.clear_tool_results.exclude = ct.exclude;
    o.clear_tool_results.clear_at_least = ct.clear_at_least;
    o.clear_tool_results.clear_arguments = ct.clear_arguments;
    o.clear_tool_results.placeholder = shared_text(ct.placeholder);
    o.archive = c.history.archive.enabled;
    const auto& v = c.compressor.verify;
    if (v.max_ratio > 0 || v.reject_refusals || v.same_script || v.breaker_failures > 0 || c.compressor.stack_summaries > 0) {
        summary_options s;
        s.stack_summaries = static_cast<std::size_t>(c.compressor.stack_summaries);
        s.max_ratio = v.max_ratio;
        if (v.reject_refusals) s.refusal_prefixes = default_refusal_prefixes();
        s.same_script = v.same_script;
        if (v.breaker_failures > 0)  // one breaker for every session of the agent options (the bot's)
            s.breaker = std::make_shared<summary_breaker>(static_cast<std::size_t>(v.breaker_failures),
                                                          std::chrono::seconds(v.breaker_cool_down_seconds));
        o.summary = std::make_shared<const summary_options>(std::move(s));
    }
    return o;
}

/// history.archive.*: a store's archive bounds (sqlite_store_options::archive, postgres_store_options::archive,
/// ram_store's constructor).
template <>
[[nodiscard]] inline archive_options from_config<archive_options>(const config& c) {
    archive_options o;
    o.max_messages = static_cast<std::size_t>(c.history.archive.max_messages);
    o.max_bytes = static_cast<std::size_t>(c.history.archive.max_bytes);
    o.keep_on_clear = c.history.archive.keep_on_clear;
    return o;
}

/// memory.*.
template <>
[[nodiscard]] inline memory::manager_options from_config<memory::manager_options>(const config& c) {
    memory::manager_options o;
    o.max_entries = static_cast<std::size_t>(c.memory.max_entries);
    o.max_content_runes = static_cast<std::size_t>(c.memory.max_content_runes);
    o.inject_entries = static_cast<std::size_t>(c.memory.inject_entries);
    o.inject_runes = static_cast<std::size_t>(c.memory.inject_runes);
    o.near_duplicate_threshold = c.memory.near_duplicate_threshold;
    o.exact_fold = c.memory.fold_case_and_width ? memory::exact_duplicate_fold::width_and_case
                                                : memory::exact_duplicate_fold::white_space;
    o.max_user_id_runes = static_cast<std::size_t>(c.memory.max_user_id_runes);
    o.max_tags = static_cast<std::size_t>(c.memory.max_tags);
    o.max_tag_runes = static_cast<std::size_t>(c.memory.max_tag_runes);
    o.versions_kept = static_cast<std::size_t>(c.memory.versions_kept);
    return o;
}

/// session.max_idle_minutes, session.max_sessions (0 disables either).
template <>
[[nodiscard]] inline session_limits from_config<session_limits>(const config& c) {
    session_limits l;
    l.max_idle = std::chrono::minutes(c.session.max_idle_minutes > 0 ? c.session.max_idle_minutes : 0);
    l.max_sessions = c.session.max_sessions > 0 ? static_cast<std::size_t>(c.session.max_sessions) : 0;
    return l;
}

/// session.*: the limits and the group auto-clear.
template <>
[[nodiscard]] inline session_options from_config<session_options>(const config& c) {
    session_options o;
    o.limits = from_config<session_limits>(c);
    o.group_auto_clear = c.session.group_auto_clear > 0 ? c.session.group_auto_clear : 0;
    return o;
}

} // namespace ania
