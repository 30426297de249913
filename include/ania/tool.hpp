// ania/tool.hpp -- the shape of a tool the model can call: name, description, JSON-schema parameters, handler.
// SPDX-License-Identifier: MIT
#pragma once

#include <functional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include <ania/detail/linkage.hpp>
#include <ania/json_fwd.hpp>
#include <ania/message.hpp>

namespace ania {

/// What a tool that produces images answers: its text, and image references (http(s) URLs or data URIs).
/// The agent's image policy decides what the model gets of them (SPEC §5): image parts in the next round
/// (multimodal) or a vision model's description in the result text (describe_images).
struct tool_output {
    std::string text;
    std::vector<std::string> images;
};

/// A function-calling tool. `handler` receives `function.arguments` exactly as the model produced it (it
/// may be invalid JSON) and returns the text of the tool message the model reads; it must not throw: bad
/// arguments are answered with an error text the model can act on.
struct tool {
    std::string name;
    std::string description;
    /// A JSON Schema object (an ania::json object converts): its members. Empty: a tool without parameters,
    /// sent as {"type":"object","properties":{}} (what both OpenAI and Anthropic accept).
    json_members parameters;
    std::function<std::string(std::string_view arguments)> handler;
    /// For a tool that produces images (load_images, local_image, screenshot): used instead of `handler`
    /// when set. Same rules as `handler`.
    std::function<tool_output(std::string_view arguments)> image_handler = {};

    /// The entry of a request's `tools` array: {"type":"function","function":{name, description, parameters}}.
    /// (Defined with the JSON API: a caller that reads the result includes <ania/json.hpp>.)
    [[nodiscard]] ANIA_INLINE json definition() const;
};

namespace detail {
inline const tool_call*& current_call_slot() noexcept {
    thread_local const tool_call* current = nullptr;
    return current;
}
} // namespace detail

/// The call a tool's handler is running for, on this thread (tool_registry::run sets it around the handler):
/// its id and arguments, for a handler that records who asked (the memory tools' provenance). Null outside
/// a handler.
[[nodiscard]] inline const tool_call* current_tool_call() noexcept { return detail::current_call_slot(); }

/// The JSON array of the tools' definitions, as compact text (what a request's `tools` adds to its size).
[[nodiscard]] ANIA_INLINE std::string definitions_text(std::span<const tool> tools);

namespace detail {
/// The schema a tool with empty `parameters` is sent with.
inline constexpr std::string_view no_parameters_schema = R"({"type":"object","properties":{}})";
/// Why `arguments` are not what a tool takes (a JSON object): the parse error or "got <type>"; empty when they
/// are. A tool's handler gets only arguments that passed this.
[[nodiscard]] ANIA_INLINE std::string tool_arguments_problem(std::string_view arguments);
} // namespace detail

} // namespace ania

#if ANIA_HEADER_ONLY
#include <ania/tool-inl.hpp>
#endif
