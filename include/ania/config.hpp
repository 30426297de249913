// ania/config.hpp -- the configuration room in one include: the keys and their checks (<ania/config/config.hpp>),
// loading them from JSON (load_config / parse_config / load_config_file / to_json), and from_config<T> for the
// core's options (<ania/config/from_config.hpp>). The clients' readers are in <ania/config/clients.hpp>,
// PostgreSQL's in <ania/config/postgres.hpp>. The parts' option headers never include this: configuration is
// the only bridge, so a program that builds its options by hand does not parse Hana.
// SPDX-License-Identifier: MIT
#pragma once

#include <ania/config/config.hpp>
#include <ania/config/from_config.hpp>
#include <ania/detail/linkage.hpp>

#if ANIA_HEADER_ONLY
#include <ania/config/io.hpp>  // the loading templates, instantiated where used
#endif
