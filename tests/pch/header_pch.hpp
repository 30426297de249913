// tests/pch/header_pch.hpp -- the one-header tests' precompiled header: nlohmann/json, parsed once instead of once
// per header. With clang's -fpch-instantiate-templates it also holds the instantiations it forces in every TU
// (nlohmann's own `_json` literal instantiates its whole parser). clang++ -O0 with ASan+UBSan, a header alone:
// agent/agent.hpp 6.4 -> 2.6 s, bot/bot.hpp 9.1 -> 5.2 s. Used only by the headers that reach
// <nlohmann/json.hpp> through their own includes (headers/pch_eligible.py): for them it hides nothing.
#include <nlohmann/json.hpp>
