// ania/tool-inl.hpp -- the definitions of <ania/tool.hpp> that need the JSON API (header-only mode includes
// this; in compiled mode the library does).
// SPDX-License-Identifier: MIT
#pragma once

#include <ania/detail/linkage.hpp>
#if !ANIA_HEADER_ONLY && !defined(ANIA_BUILDING_LIBRARY)
static_assert(false, "compiled mode: the library defines what <ania/tool-inl.hpp> defines; include <ania/tool.hpp>");
#endif

#include <ania/json.hpp>
#include <ania/tool.hpp>

namespace ania {

ANIA_INLINE json tool::definition() const {
    json fn = json::object();
    fn["name"] = name;
    fn["description"] = description;
    fn["parameters"] = parameters.empty() ? json::parse(detail::no_parameters_schema) : to_json(parameters);
    json d = json::object();
    d["type"] = "function";
    d["function"] = std::move(fn);
    return d;
}

ANIA_INLINE std::string definitions_text(std::span<const tool> tools) {
    json defs = json::array();
    for (const tool& t : tools) defs.push_back(t.definition());
    return defs.dump(-1, ' ', false, json::error_handler_t::replace);
}

ANIA_INLINE std::string detail::tool_arguments_problem(std::string_view arguments) {
    try {
        const json parsed = parse_json(arguments);
        if (!parsed.is_object()) return std::string("got ") + parsed.type_name();
        return {};
    } catch (const std::exception& e) {
        return e.what();
    }
}

} // namespace ania
