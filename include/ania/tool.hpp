// ania/tool.hpp -- the shape of a tool the model can call: name, description, JSON-schema parameters, handler.
// SPDX-License-Identifier: MIT
#pragma once

#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include <ania/json.hpp>

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
    json parameters;  ///< a JSON Schema object
    std::function<std::string(std::string_view arguments)> handler;
    /// For a tool that produces images (load_images, local_image, screenshot): used instead of `handler`
    /// when set. Same rules as `handler`.
    std::function<tool_output(std::string_view arguments)> image_handler = {};

    /// The entry of a request's `tools` array: {"type":"function","function":{name, description, parameters}}.
    [[nodiscard]] json definition() const {
        json fn = json::object();
        fn["name"] = name;
        fn["description"] = description;
        fn["parameters"] = parameters;
        json d = json::object();
        d["type"] = "function";
        d["function"] = std::move(fn);
        return d;
    }
};

} // namespace ania
