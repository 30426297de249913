// ania/bot/sqlite.hpp -- a bot's history and memory in one SQLite file (`bot_options::database`, default
// "ania.db"): ania_chat_message and ania_memory side by side. Needs dependency('ania-sqlite').
// SPDX-License-Identifier: MIT
#pragma once

#include <string>

#include <ania/bot/database.hpp>
#include <ania/memory/sqlite_backend.hpp>
#include <ania/store/sqlite_store.hpp>

namespace ania {

template <>
struct bot_database<sqlite_store> {
    using memory_traits = memory::sqlite_memory_traits;

    bot_database(const config& c, const bot_options& o, const log_sink& log)
        : store(path_of(o), store_options(c, log)), memory(path_of(o), file_options(log)) {}

    sqlite_store store;
    memory::sqlite_backend memory;

private:
    [[nodiscard]] static std::string path_of(const bot_options& o) { return o.database.empty() ? std::string("ania.db") : o.database; }
    [[nodiscard]] static sqlite_file_options file_options(const log_sink& log) {
        sqlite_file_options f;
        f.log = log;
        return f;
    }
    [[nodiscard]] static sqlite_store_options store_options(const config& c, const log_sink& log) {
        sqlite_store_options f;
        f.log = log;
        f.archive = from_config<archive_options>(c);
        return f;
    }
};

} // namespace ania
