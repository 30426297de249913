// ania/memory/postgres_backend.hpp -- memories as PostgreSQL rows (SPEC §4), shared by processes and machines.
// Needs libpq: `dependency('ania-postgres')`.
// SPDX-License-Identifier: MIT
#pragma once

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <ania/detail/postgres.hpp>
#include <ania/json.hpp>
#include <ania/detail/linkage.hpp>
#include <ania/log.hpp>
#include <ania/memory/columns.hpp>
#include <ania/memory/concepts.hpp>
#include <ania/memory/entry.hpp>
#include <ania/memory/traits.hpp>

namespace ania::memory {

namespace detail {
inline constexpr const char* postgres_memory_schema =
    "CREATE TABLE IF NOT EXISTS ania_memory("
    " scope TEXT NOT NULL,"
    " id TEXT NOT NULL,"
    " user_id TEXT NOT NULL DEFAULT '',"
    " content TEXT NOT NULL,"
    " tags JSONB NOT NULL DEFAULT '[]',"
    " emb REAL[] NOT NULL DEFAULT '{}',"
    " created_at TEXT NOT NULL,"
    " PRIMARY KEY(scope, id));"
    "CREATE TABLE IF NOT EXISTS ania_memory_version("
    " scope TEXT PRIMARY KEY,"
    " version BIGINT NOT NULL);";

[[nodiscard]] inline std::string pg_real_array(const std::vector<float>& v) {
    std::string out = "{";
    char buf[32];
    for (std::size_t i = 0; i < v.size(); ++i) {
        std::snprintf(buf, sizeof buf, "%.9g", static_cast<double>(v[i]));
        if (i) out.push_back(',');
        out += buf;
    }
    out.push_back('}');
    return out;
}
} // namespace detail

/// `ania_memory(scope, id, user_id, content, tags JSONB, emb REAL[], created_at)` with a per-scope version
/// in `ania_memory_version`, bumped in the transaction of every write: a versioned_memory_backend, so the
/// manager of one process sees at once what another process saved (it compares the version before using
/// its in-RAM index of a scope) and two processes saving at the same instant cannot both pass the cap and
/// the duplicate checks (insert_if). Scopes are validated (scope.hpp) before they get here; every value is a
/// bound parameter. If the server cannot be reached at construction, `enabled()` is false (logged): the
/// memory feature is then disabled as a whole (SPEC §4). Thread-safe (a connection pool).
class postgres_backend {
public:
    explicit postgres_backend(postgres_options opt = {}) : pool_(std::move(opt)) {
        try {
            auto c = pool_.use();
            ania::detail::pg_transaction t(*c, "memory schema");
            c->exec_simple("SELECT pg_advisory_xact_lock(7309447127341220737)", "memory schema lock");
            c->exec_simple(detail::postgres_memory_schema, "create the memory tables");
            t.commit();
            enabled_ = true;
        } catch (const std::exception& e) {
            log_to(pool_.options().log, log_level::error, std::string("memory postgres_backend disabled: ") + e.what());
        }
    }

    [[nodiscard]] bool enabled() const noexcept { return enabled_; }

    [[nodiscard]] std::vector<entry> load(const scope& s) const {
        std::vector<entry> out;
        if (!enabled_) return out;
        ania::detail::pg_params p;
        const std::string sc = s.str();
        p.text(sc);
        auto c = pool_.use();
        const auto r = c->exec("SELECT id, user_id, content, tags::text, emb::text, created_at FROM ania_memory WHERE scope = $1 "
                               "ORDER BY created_at, id",
                               p, "memory load");
        const int n = PQntuples(r.get());
        out.reserve(static_cast<std::size_t>(n));
        for (int i = 0; i < n; ++i) {
            entry e;
            e.id = text::repair_utf8(PQgetvalue(r.get(), i, 0));
            e.user_id = text::repair_utf8(PQgetvalue(r.get(), i, 1));
            e.content = text::repair_utf8(PQgetvalue(r.get(), i, 2));
            e.created_at = PQgetvalue(r.get(), i, 5);
            std::string emb = PQgetvalue(r.get(), i, 4);  // {1,2.5} -> [1,2.5] for the shared decoder
            if (emb.size() >= 2 && emb.front() == '{' && emb.back() == '}') {
                emb.front() = '[';
                emb.back() = ']';
            }
            if (const std::string bad = detail::decode_columns(PQgetvalue(r.get(), i, 3), emb, e); !bad.empty())
                log_to(pool_.options().log, log_level::warn, "memory: malformed tags or emb of " + text::quote_for_message(e.id) + " in " + sc + " ignored: " + bad);
            out.push_back(std::move(e));
        }
        return out;
    }

    [[nodiscard]] std::vector<std::string> scopes() const {
        std::vector<std::string> out;
        if (!enabled_) return out;
        auto c = pool_.use();
        const auto r = c->exec_simple("SELECT DISTINCT scope FROM ania_memory ORDER BY scope", "memory scopes");
        for (int i = 0; i < PQntuples(r.get()); ++i) out.emplace_back(PQgetvalue(r.get(), i, 0));
        return out;
    }

    [[nodiscard]] std::uint64_t version(const scope& s) const {
        if (!enabled_) return 0;
        ania::detail::pg_params p;
        const std::string sc = s.str();
        p.text(sc);
        auto c = pool_.use();
        const auto r = c->exec("SELECT version FROM ania_memory_version WHERE scope = $1", p, "memory version");
        return PQntuples(r.get()) ? static_cast<std::uint64_t>(std::stoll(PQgetvalue(r.get(), 0, 0))) : 0;
    }

    std::uint64_t insert(const scope& s, const entry& e) { return *write(kind::insert, s, &e, e.id, std::nullopt); }
    std::optional<std::uint64_t> insert_if(const scope& s, const entry& e, std::uint64_t expected) {
        return write(kind::insert, s, &e, e.id, expected);
    }
    std::uint64_t update(const scope& s, const entry& e) { return *write(kind::update, s, &e, e.id, std::nullopt); }
    std::uint64_t erase(const scope& s, std::string_view id) { return *write(kind::erase, s, nullptr, id, std::nullopt); }

private:
    enum class kind { insert, update, erase };

    std::optional<std::uint64_t> write(kind k, const scope& s, const entry* e, std::string_view id, std::optional<std::uint64_t> expected) {
        if (!enabled_) return std::uint64_t{0};
        const std::string sc = s.str(), key(id);
        std::string tags, emb;
        if (e) {
            json t = json::array();
            for (const auto& x : e->tags) t.push_back(x);
            tags = t.dump(-1, ' ', false, json::error_handler_t::replace);
            emb = detail::pg_real_array(e->embedding);
        }
        auto c = pool_.use();
        ania::detail::pg_transaction t(*c, "memory write");
        ania::detail::pg_params v;
        v.text(sc);
        // The version row is locked first (created at 0 if missing): writes of a scope are serialised, and
        // insert_if compares against the version under that lock.
        c->exec("INSERT INTO ania_memory_version(scope, version) VALUES ($1, 0) ON CONFLICT (scope) DO NOTHING", v, "memory version");
        const auto cur = c->exec("SELECT version FROM ania_memory_version WHERE scope = $1 FOR UPDATE", v, "memory version");
        if (expected && static_cast<std::uint64_t>(std::stoll(PQgetvalue(cur.get(), 0, 0))) != *expected) return std::nullopt;
        ania::detail::pg_params p;
        p.text(sc);
        p.text(key);
        const char* sql = nullptr;
        if (k != kind::erase) {
            p.text(e->user_id);
            p.text(e->content);
            p.text(tags);
            p.text(emb);
            p.text(e->created_at);
            sql = k == kind::insert ? "INSERT INTO ania_memory(scope, id, user_id, content, tags, emb, created_at) "
                                      "VALUES ($1, $2, $3, $4, $5::jsonb, $6::real[], $7)"
                                    : "UPDATE ania_memory SET user_id = $3, content = $4, tags = $5::jsonb, emb = $6::real[], "
                                      "created_at = $7 WHERE scope = $1 AND id = $2";
        } else {
            sql = "DELETE FROM ania_memory WHERE scope = $1 AND id = $2";
        }
        const auto r = c->exec(sql, p, "memory write");
        if (e && std::string_view(PQcmdTuples(r.get())) != "1") throw error(errc::store_error, "memory " + e->id + " not found in " + sc);
        const auto nv = c->exec("UPDATE ania_memory_version SET version = version + 1 WHERE scope = $1 RETURNING version", v, "memory version");
        const std::uint64_t out = static_cast<std::uint64_t>(std::stoll(PQgetvalue(nv.get(), 0, 0)));
        t.commit();
        return out;
    }

    mutable ania::detail::pg_pool pool_;
    bool enabled_ = false;
};

static_assert(versioned_memory_backend<postgres_backend>);

/// The spec's memory on PostgreSQL.
struct postgres_memory_traits : default_memory_traits {
    using backend = postgres_backend;
};
using postgres_manager = basic_manager<postgres_memory_traits>;  // memory/manager.hpp

} // namespace ania::memory

#if !ANIA_HEADER_ONLY  // no compiled library for PostgreSQL: its manager is instantiated where it is used
#include <ania/memory/manager-inl.hpp>
#endif
