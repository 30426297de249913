// ania/config/io-inl.hpp -- compiled mode's ania::config functions of <ania/config.hpp>, compiled once in the
// library (header-only mode uses the templates of <ania/config/io.hpp> directly, instantiated where used).
// SPDX-License-Identifier: MIT
#pragma once

#include <ania/detail/linkage.hpp>
#if !ANIA_HEADER_ONLY && !defined(ANIA_BUILDING_LIBRARY)
static_assert(false, "compiled mode: the library defines what <ania/config/io-inl.hpp> defines; include <ania/config.hpp>");
#endif

#include <ania/config/config.hpp>
#include <ania/config/io.hpp>

namespace ania {

#if !ANIA_HEADER_ONLY
config load_config(const json& j) { return load_config<config>(j); }
config parse_config(std::string_view text) { return parse_config<config>(text); }
config load_config_file(const std::string& path) { return load_config_file<config>(path); }
json to_json(const config& c) { return detail::write_config_value(c); }
#endif

} // namespace ania
