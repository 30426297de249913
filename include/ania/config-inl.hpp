// ania/config-inl.hpp -- the definitions of <ania/config.hpp>.
// Header-only mode includes this from there; compiled mode compiles it once, in the library (see
// <ania/detail/linkage.hpp>).
// SPDX-License-Identifier: MIT
#pragma once

#include <ania/config.hpp>
#include <ania/config_io.hpp>

namespace ania {

ANIA_INLINE config load_config(const json& j) { return load_config<config>(j); }
ANIA_INLINE config parse_config(std::string_view text) { return parse_config<config>(text); }
ANIA_INLINE json to_json(const config& c) { return detail::write_config_value(c); }

} // namespace ania
