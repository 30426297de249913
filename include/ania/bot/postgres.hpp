// ania/bot/postgres.hpp -- a bot's history and memory in one PostgreSQL database, shared by any number of
// processes: ania_chat_message and ania_memory side by side. The DSN is `bot_options::database` when set, else
// `postgres.dsn` (empty: the PG* environment variables); pool size, statement timeout and transaction pooling
// come from `postgres.*`. Needs dependency('ania-postgres').
//
//     ania::basic_bot<ania::bot_traits<ania::openai::client, ania::postgres_store>> bot(cfg, {.database = "dbname=bot"});
//
// Two pools over the one database (the history store's and the memory backend's): each keeps its own
// connections' state (the store's lease fencing, the backend's per-scope versions), so they are not shared.
// Several processes answering one session need the leases too: see <ania/session/postgres_leases.hpp>.
// SPDX-License-Identifier: MIT
#pragma once

#include <ania/bot/database.hpp>
#include <ania/config/postgres.hpp>
#include <ania/memory/postgres_backend.hpp>
#include <ania/store/postgres_store.hpp>

namespace ania {

template <>
struct bot_database<postgres_store> {
    using memory_traits = memory::postgres_memory_traits;

    bot_database(const config& c, const bot_options& o, const log_sink& log)
        : store(store_options(c, o, log)), memory(options(c, o, log)) {}

    postgres_store store;
    memory::postgres_backend memory;

private:
    [[nodiscard]] static postgres_options options(const config& c, const bot_options& o, const log_sink& log) {
        postgres_options p = from_config<postgres_options>(c);
        if (!o.database.empty()) p.dsn = o.database;
        p.log = log;
        return p;
    }
    [[nodiscard]] static postgres_store_options store_options(const config& c, const bot_options& o, const log_sink& log) {
        postgres_store_options s;
        static_cast<postgres_options&>(s) = options(c, o, log);
        s.archive = from_config<archive_options>(c);
        return s;
    }
};

} // namespace ania
