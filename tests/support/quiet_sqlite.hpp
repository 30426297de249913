// tests/support/quiet_sqlite.hpp -- SQLite store options whose log lines go to a vector (or nowhere).
#pragma once

#include <string>
#include <vector>

#include <ania/store/sqlite_store.hpp>

namespace ania_test {

inline ania::sqlite_store_options quiet(std::vector<std::string>* logged = nullptr) {
    ania::sqlite_store_options o;
    o.log = [logged](ania::log_level, std::string_view t) { if (logged) logged->emplace_back(t); };
    return o;
}

} // namespace ania_test
