// ania/agent/chat.hpp -- what goes into a turn (user_input, chat_options) and what comes out (chat_result).
// The options of an agent are in <ania/agent/options.hpp>.
// SPDX-License-Identifier: MIT
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <ania/agent/hooks.hpp>
#include <ania/agent/options.hpp>
#include <ania/agent/tool_registry.hpp>
#include <ania/context/maybe_compress.hpp>
#include <ania/context/window_options.hpp>
#include <ania/history/persist.hpp>
#include <ania/message.hpp>
#include <ania/transcript.hpp>
#include <ania/usage.hpp>

namespace ania {

/// What the user sent: text, images (http(s) URLs or data URIs) and optionally the participant's name.
struct user_input {
    std::string text;
    std::vector<std::string> images{};
    std::optional<std::string> name{};

    user_input(std::string t) : text(std::move(t)) {}                                       // NOLINT: text is the common case
    user_input(const char* t) : text(t) {}                                                  // NOLINT
    user_input(std::string t, std::vector<std::string> imgs) : text(std::move(t)), images(std::move(imgs)) {}
};

/// Per-turn options.
struct chat_options {
    /// Spliced before the user's text in this turn's request only (SPEC §2: memory blocks, knowledge
    /// snippets, reminders). Never in the window, never in the store: history keeps what the user wrote.
    std::vector<std::string> injections{};
    /// 0: agent_options::max_iterations.
    int max_iterations = 0;
    /// "Steer": called after each tool batch, before the next model call (never inside a batch, so calls stay
    /// paired with their results); each message it returns joins this turn as a user message that the next
    /// call sees (and the history keeps). A session cache passes the messages that arrived meanwhile.
    std::function<std::vector<user_input>()> steer{};
};

/// What one turn did.
struct chat_result {
    turn_end end = turn_end::failed;
    std::string reply;                ///< the model's final text (empty unless end == replied)
    std::vector<message> messages;    ///< the turn as the window keeps it (empty when nothing was committed)
    turn_stats stats;                 ///< usage of the turn's calls, iterations, compression tokens apart
    compress_report compression;      ///< the compression before the round (status not_due when none ran)
    std::size_t compressions = 0;     ///< compressions during the turn (before it, and inside the tool loop)
    repair_report repaired;           ///< what the transcript check fixed in the model's replies
    std::size_t ids_assigned = 0;     ///< tool calls that came without a usable id and got one
    std::string error;                ///< why the turn failed or was blocked
    call_failure failure{};           ///< end == failed because the model call failed: why, typed
    std::chrono::nanoseconds elapsed{};

    [[nodiscard]] bool ok() const noexcept { return end == turn_end::replied; }
    [[nodiscard]] bool committed() const noexcept { return !messages.empty(); }
};

} // namespace ania
