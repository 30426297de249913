// ania/agent/concepts.hpp -- the contracts of an agent's own slots: tools, hooks, events, images, log, clock.
// SPDX-License-Identifier: MIT
//
// The contracts of the parts an agent is built from (store, client, compressor, token counter) are in
// <ania/concepts.hpp>; these are the ones only an agent uses. Each has an archetype, as there. The default
// policies are with their kind: stderr_log in <ania/log.hpp>, steady_clock_policy in <ania/agent/clock.hpp>.
#pragma once

#include <chrono>
#include <concepts>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include <ania/agent/events.hpp>
#include <ania/agent/hooks.hpp>
#include <ania/agent/images.hpp>
#include <ania/agent/tool_registry.hpp>
#include <ania/agent/clock.hpp>
#include <ania/log.hpp>  // stderr_log

namespace ania {

/// The tools a session offers (tool_registry): the list sent with each request, lookup by name, a call run
/// without throwing, and tools added or removed at run time.
template <class R>
concept tool_source = std::default_initializable<R> && requires(R& r, const R& cr, const tool_call& call, const tool_texts& texts, tool t,
                                                                std::string_view name) {
    { cr.tools() } -> std::same_as<std::span<const tool>>;
    { cr.run(call, texts) } -> std::same_as<tool_output>;
    r.add(std::move(t));
    { r.remove(name) } -> std::convertible_to<bool>;
};

/// The hook events of hooks.hpp. A decision hook returns its decision; the notifications return nothing.
template <class H>
concept agent_hooks = requires(H& h, const session_start_event& ss, const user_prompt_event& up, const tool_use_event& tu,
                               const tool_result_event& tr, const stop_event& st, const pre_compact_event& pc) {
    { h.session_start(ss) } -> std::convertible_to<std::string>;
    { h.user_prompt_submit(up) } -> std::same_as<prompt_decision>;
    { h.pre_tool_use(tu) } -> std::same_as<tool_decision>;
    h.post_tool_use(tr);
    h.stop(st);
    h.pre_compact(pc);
};

/// Receives every event type of events.hpp.
template <class E>
concept event_sink = requires(E& e, const compression_event& c, const repair_event& r, const persistence_event& p) {
    e(c);
    e(r);
    e(p);
};

/// What the main model gets of an image (images.hpp): `prepare_user` rewrites the user message (the input's
/// images), `from_tool` turns a tool's images into text for its result and/or a message for the next round.
template <class P>
concept image_policy = requires(P& p, message& m, std::vector<std::string> images, const log_sink& log) {
    p.prepare_user(m, log);
    { p.from_tool(std::move(images), log) } -> std::same_as<tool_images>;
};

/// Where an agent's log lines go: called from the thread running the turn.
template <class L>
concept log_policy = std::copy_constructible<L> && requires(const L& l, log_level level, std::string_view text) { l(level, text); };

/// The time source of a turn's duration (a steady clock; a manual one in tests).
template <class C>
concept agent_clock = requires { typename C::duration; } && requires(C& c) {
    { c.now() } -> std::convertible_to<typename C::time_point>;
};

// ---- archetypes ----------------------------------------------------------------------------------------

struct tool_source_archetype {
    std::span<const tool> tools() const;
    tool_output run(const tool_call&, const tool_texts&) const;
    void add(tool);
    bool remove(std::string_view);
};
struct agent_hooks_archetype {
    std::string session_start(const session_start_event&);
    prompt_decision user_prompt_submit(const user_prompt_event&);
    tool_decision pre_tool_use(const tool_use_event&);
    void post_tool_use(const tool_result_event&);
    void stop(const stop_event&);
    void pre_compact(const pre_compact_event&);
};
struct event_sink_archetype {
    void operator()(const compression_event&);
    void operator()(const repair_event&);
    void operator()(const persistence_event&);
};
struct image_policy_archetype {
    void prepare_user(message&, const log_sink&);
    tool_images from_tool(std::vector<std::string>, const log_sink&);
};
struct log_policy_archetype {
    void operator()(log_level, std::string_view) const;
};
struct agent_clock_archetype {
    using duration = std::chrono::nanoseconds;
    using time_point = std::chrono::time_point<std::chrono::steady_clock, duration>;
    time_point now();
};

static_assert(tool_source<tool_source_archetype> && tool_source<tool_registry>);
static_assert(agent_hooks<agent_hooks_archetype> && agent_hooks<no_hooks> && agent_hooks<hook_set>);
static_assert(event_sink<event_sink_archetype> && event_sink<no_events> && event_sink<event_functions>);
static_assert(image_policy<image_policy_archetype> && image_policy<multimodal> &&
              image_policy<describe_images<chat_client_archetype>>);
static_assert(log_policy<log_policy_archetype> && log_policy<stderr_log>);
static_assert(agent_clock<agent_clock_archetype> && agent_clock<steady_clock_policy>);

} // namespace ania
