// tests/unit/bot_postgres.cpp -- basic_bot over PostgreSQL: history and memory in the throwaway cluster's
// database (tests/support/pg_cluster.hpp), through the same cases as one SQLite file (bot_cases.hpp).
#include <catch2/catch.hpp>

#include <string>

#include <ania/bot/bot.hpp>
#include <ania/bot/postgres.hpp>
#include <ania/detail/postgres.hpp>

#include "pg_cluster.hpp"
#include "bot_rules.hpp"
#include "temp_dir.hpp"

namespace {

struct postgres_db {
    using bot = ania::basic_bot<ania_test::bot::scripted_bot_traits<ania::postgres_store>>;
    /// The cluster's database. Each case has a temp_dir of its own: the first bot of a case empties the
    /// database, so every case starts from no history and no memory (a restart within a case keeps them).
    static void place(ania::bot_options& o, const ania_test::temp_dir& dir) {
        static std::string last_case;
        if (dir.path().string() != last_case) {
            last_case = dir.path().string();
            empty();
        }
        o.database = ania_test::pg_cluster::get().dsn();
    }
    static ania::bot_options options(const ania_test::temp_dir& dir, const ania_test::bot::capture& log) {
        return ania_test::bot::bot_options_in<postgres_db>(dir, log);
    }
    static void empty() {
        ania::postgres_options p;
        p.dsn = ania_test::pg_cluster::get().dsn();
        ania::detail::pg_connection c(p);
        c.exec_simple("DROP TABLE IF EXISTS ania_chat_message, ania_chat_session, ania_chat_quarantine, ania_memory, "
                      "ania_memory_version, ania_memory_history");
    }
};
} // namespace
#define ANIA_BOT_DATABASES postgres_db
#include "bot_cases.hpp"
#if ANIA_TEST_CONSOLE
#include "console_cases.hpp"
#endif
