// ania/tool.hpp -- the shape of a tool the model can call: name, description, JSON-schema parameters, handler.
// SPDX-License-Identifier: MIT
#pragma once

#include <functional>
#include <string>
#include <string_view>

#include <ania/json.hpp>

namespace ania {

/// A function-calling tool. `handler` receives `function.arguments` exactly as the model produced it (it
/// may be invalid JSON) and returns the text of the tool message the model reads; it must not throw: bad
/// arguments are answered with an error text the model can act on.
struct tool {
    std::string name;
    std::string description;
    json parameters;  ///< a JSON Schema object
    std::function<std::string(std::string_view arguments)> handler;

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
