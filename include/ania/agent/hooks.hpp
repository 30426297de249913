// ania/agent/hooks.hpp -- the original's hook events with Claude Code semantics, and the in-process hook set.
// SPDX-License-Identifier: MIT
#pragma once

#include <cstddef>
#include <cstdint>
#include <exception>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <ania/context/maybe_compress.hpp>  // pre_compact_event
#include <ania/detail/linkage.hpp>
#include <ania/message.hpp>

namespace ania {

/// How a turn ended (chat_result::end, stop_event::end).
enum class turn_end : std::uint8_t {
    replied,         ///< the model answered with text
    max_iterations,  ///< the tool loop reached agent_options::max_iterations before a text answer
    cancelled,       ///< the stop token was requested
    failed,          ///< the client failed (chat_result::error says why)
    blocked,         ///< a UserPromptSubmit hook blocked the prompt (chat_result::error holds its reason)
};

[[nodiscard]] constexpr std::string_view to_string(turn_end e) noexcept {
    switch (e) {
    case turn_end::replied: return "replied";
    case turn_end::max_iterations: return "max_iterations";
    case turn_end::cancelled: return "cancelled";
    case turn_end::failed: return "failed";
    case turn_end::blocked: return "blocked";
    }
    return "failed";
}

/// SessionStart: once per resident session, before its first turn. What the hook returns is added to the
/// base prompt of every request of that session (never stored; it is asked again after a restart).
struct session_start_event {
    std::string_view session;
    std::size_t history_messages;  ///< what the store held
};

/// UserPromptSubmit: before a turn is sent. The hook may block it (nothing is sent or stored; the reason is
/// the turn's error) or add context to this turn's user message (sent, never stored: SPEC §2).
struct user_prompt_event {
    std::string_view session;
    std::string_view text;  ///< what the user wrote
};
struct prompt_decision {
    bool block = false;
    std::string reason;   ///< why it is blocked
    std::string context;  ///< added to this turn's request only

    [[nodiscard]] static prompt_decision allow(std::string context = {}) { return {false, {}, std::move(context)}; }
    [[nodiscard]] static prompt_decision deny(std::string why) { return {true, std::move(why), {}}; }
};

/// PreToolUse: before a tool runs. A block answers the call with the reason instead of running the tool.
struct tool_use_event {
    std::string_view session;
    const tool_call& call;
};
struct tool_decision {
    bool block = false;
    std::string reason;  ///< becomes the tool result the model reads

    [[nodiscard]] static tool_decision allow() { return {}; }
    [[nodiscard]] static tool_decision deny(std::string why) { return {true, std::move(why)}; }
};

/// PostToolUse: a notification after a tool answered; `result` is cut to agent_options::post_tool_use_runes.
struct tool_result_event {
    std::string_view session;
    const tool_call& call;
    std::string_view result;
};

/// Stop: a notification when a turn ends, with what the model answered.
struct stop_event {
    std::string_view session;
    std::string_view reply;
    turn_end end;
};

/// No hooks: the default when a Traits leaves `hooks` out of an agent_of; every call is inlined away.
struct no_hooks {
    std::string session_start(const session_start_event&) { return {}; }
    prompt_decision user_prompt_submit(const user_prompt_event&) { return {}; }
    tool_decision pre_tool_use(const tool_use_event&) { return {}; }
    void post_tool_use(const tool_result_event&) {}
    void stop(const stop_event&) {}
    void pre_compact(const pre_compact_event&) {}
};

/// In-process hooks registered at run time, several per event, run in the order added. For a decision the
/// first block wins and the contexts of the others are joined with a blank line. A hook that throws does not
/// stop the others; the agent logs the exception, and it never ends a turn. Copies share nothing (each holds its own
/// functions); registering while a turn of the same agent runs is not allowed (one agent, one thread).
class hook_set {
public:
    hook_set() noexcept = default;
    hook_set(const hook_set& o);
    hook_set& operator=(const hook_set& o);
    hook_set(hook_set&&) noexcept = default;
    hook_set& operator=(hook_set&&) noexcept = default;
    ~hook_set() = default;

    hook_set& on_session_start(std::function<std::string(const session_start_event&)> f);
    hook_set& on_user_prompt_submit(std::function<prompt_decision(const user_prompt_event&)> f);
    hook_set& on_pre_tool_use(std::function<tool_decision(const tool_use_event&)> f);
    hook_set& on_post_tool_use(std::function<void(const tool_result_event&)> f);
    hook_set& on_stop(std::function<void(const stop_event&)> f);
    hook_set& on_pre_compact(std::function<void(const pre_compact_event&)> f);

    std::string session_start(const session_start_event& e);
    prompt_decision user_prompt_submit(const user_prompt_event& e);
    tool_decision pre_tool_use(const tool_use_event& e);
    void post_tool_use(const tool_result_event& e) { each(&lists::post_tool, e); }
    void stop(const stop_event& e) { each(&lists::stop, e); }
    void pre_compact(const pre_compact_event& e) { each(&lists::pre_compact, e); }

private:
    // The lists live in one block made by the first hook added: an agent without hooks (most of a session
    // cache's thousands) carries one null pointer, not six vectors whose 144 bytes its destructor would read.
    struct lists {
        std::vector<std::function<std::string(const session_start_event&)>> session_start;
        std::vector<std::function<prompt_decision(const user_prompt_event&)>> prompt;
        std::vector<std::function<tool_decision(const tool_use_event&)>> pre_tool;
        std::vector<std::function<void(const tool_result_event&)>> post_tool;
        std::vector<std::function<void(const stop_event&)>> stop;
        std::vector<std::function<void(const pre_compact_event&)>> pre_compact;
    };

    template <class F>
    hook_set& add(std::vector<F> lists::*list, F f) {
        if (!f) return *this;
        if (!l_) l_ = std::make_unique<lists>();
        ((*l_).*list).push_back(std::move(f));
        return *this;
    }
    /// A hook that throws does not keep the later ones from running; the first exception is rethrown after
    /// them, for the agent to log (a throwing decision hook counts as "allow").
    struct guard {
        std::exception_ptr first;
        template <class F>
        void run(F&& f) {
            try {
                f();
            } catch (...) {
                if (!first) first = std::current_exception();
            }
        }
        void rethrow() const {
            if (first) std::rethrow_exception(first);
        }
    };
    template <class F, class E>
    void each(std::vector<F> lists::*list, const E& e) {
        if (!l_) return;
        guard g;
        for (const auto& f : (*l_).*list) g.run([&] { f(e); });
        g.rethrow();
    }
    static void join(std::string& out, std::string more);

    std::unique_ptr<lists> l_;
};

} // namespace ania

#if ANIA_HEADER_ONLY
#include <ania/agent/hooks-inl.hpp>
#endif
