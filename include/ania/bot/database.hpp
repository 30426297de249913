// ania/bot/database.hpp -- where a bot keeps history and long-term memory: one database for both.
// SPDX-License-Identifier: MIT
//
// `bot_database<Store>` owns the history store and the memory backend a bot of that store uses. This primary
// template is the in-process one (ania::ram_store and memory::ram_backend: a test, a bot without
// persistence). <ania/bot/sqlite.hpp> gives one SQLite file for both, <ania/bot/postgres.hpp> one PostgreSQL
// database. A store of your own: specialize it with members `store` and `memory`, a type `memory_traits`,
// and a constructor (const config&, const bot_options&, const log_sink&).
#pragma once

#include <type_traits>

#include <ania/bot/options.hpp>
#include <ania/config.hpp>
#include <ania/log.hpp>
#include <ania/memory/ram_backend.hpp>
#include <ania/memory/traits.hpp>

namespace ania {

template <class Store>
struct bot_database {
    static_assert(std::is_default_constructible_v<Store>,
                  "ania::basic_bot: no ania::bot_database<Store> for this store; include <ania/bot/sqlite.hpp> "
                  "or <ania/bot/postgres.hpp>, or specialize ania::bot_database (see ania/bot/database.hpp)");
    using memory_traits = memory::default_memory_traits;

    bot_database(const config& c, const bot_options&, const log_sink&) : store(make_store(c)) {}

    Store store;
    memory::ram_backend memory{};

private:
    /// An in-process archiving store (ram_store) gets the configured archive bounds.
    static Store make_store(const config& c) {
        if constexpr (std::is_constructible_v<Store, archive_options>) return Store(from_config<archive_options>(c));
        else return Store{};
    }
};

} // namespace ania
