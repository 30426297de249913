// ania/config/postgres.hpp -- from_config<postgres_options>(cfg): postgres.* (dsn, pool_size, statement_timeout_ms,
// transaction_pooling). Needs libpq: `dependency('ania-postgres')`.
// SPDX-License-Identifier: MIT
#pragma once

#include <chrono>
#include <cstddef>

#include <ania/config/from_config.hpp>
#include <ania/detail/postgres.hpp>

namespace ania {

/// `postgres.*`.
template <>
[[nodiscard]] inline postgres_options from_config<postgres_options>(const config& c) {
    postgres_options o;
    o.dsn = c.postgres.dsn;
    o.pool_size = static_cast<std::size_t>(c.postgres.pool_size);
    o.statement_timeout = std::chrono::milliseconds(c.postgres.statement_timeout_ms);
    o.transaction_pooling = c.postgres.transaction_pooling;
    return o;
}

} // namespace ania
