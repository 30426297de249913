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
    " version BIGINT NOT NULL);"
    // The versions of each entry (memory/provenance.hpp); added to an older database at construction.
    "CREATE TABLE IF NOT EXISTS ania_memory_history("
    " scope TEXT NOT NULL,"
    " id TEXT NOT NULL,"
    " seq BIGINT NOT NULL,"
    " kind TEXT NOT NULL,"
    " actor TEXT NOT NULL DEFAULT '',"
    " session TEXT NOT NULL DEFAULT '',"
    " tool_call_id TEXT NOT NULL DEFAULT '',"
    " at TEXT NOT NULL,"
    " user_id TEXT NOT NULL DEFAULT '',"
    " content TEXT NOT NULL,"
    " tags JSONB NOT NULL DEFAULT '[]',"
    " PRIMARY KEY(scope, id, seq));";

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

    std::uint64_t insert(const scope& s, const entry& e) { return *write(kind::insert, s, &e, e.id, std::nullopt, nullptr); }
    std::optional<std::uint64_t> insert_if(const scope& s, const entry& e, std::uint64_t expected) {
        return write(kind::insert, s, &e, e.id, expected, nullptr);
    }
    std::uint64_t update(const scope& s, const entry& e) { return *write(kind::update, s, &e, e.id, std::nullopt, nullptr); }
    std::uint64_t erase(const scope& s, std::string_view id) { return *write(kind::erase, s, nullptr, id, std::nullopt, nullptr); }

    // The same writes with the change's version, recorded in the write's transaction (history_memory_backend).
    [[nodiscard]] std::vector<memory_version> history(const scope& s, std::string_view id) const {
        std::vector<memory_version> out;
        if (!enabled_) return out;
        ania::detail::pg_params p;
        const std::string sc = s.str(), key(id);
        p.text(sc);
        p.text(key);
        auto c = pool_.use();
        const auto r = c->exec("SELECT seq, kind, actor, session, tool_call_id, at, user_id, content, tags::text "
                               "FROM ania_memory_history WHERE scope = $1 AND id = $2 ORDER BY seq",
                               p, "memory history");
        for (int i = 0; i < PQntuples(r.get()); ++i) {
            memory_version v;
            v.seq = static_cast<std::uint64_t>(std::stoll(PQgetvalue(r.get(), i, 0)));
            v.kind = change_kind_from(PQgetvalue(r.get(), i, 1)).value_or(change_kind::updated);
            v.origin.actor = text::repair_utf8(PQgetvalue(r.get(), i, 2));
            v.origin.session = text::repair_utf8(PQgetvalue(r.get(), i, 3));
            v.origin.tool_call_id = text::repair_utf8(PQgetvalue(r.get(), i, 4));
            v.at = text::repair_utf8(PQgetvalue(r.get(), i, 5));
            v.user_id = text::repair_utf8(PQgetvalue(r.get(), i, 6));
            v.content = text::repair_utf8(PQgetvalue(r.get(), i, 7));
            entry tags_only;
            if (const std::string bad = detail::decode_columns(PQgetvalue(r.get(), i, 8), "[]", tags_only); !bad.empty())
                log_to(pool_.options().log, log_level::warn, "memory: malformed tags of a version of " + text::quote_for_message(id) + " ignored: " + bad);
            v.tags = std::move(tags_only.tags);
            out.push_back(std::move(v));
        }
        return out;
    }
    std::uint64_t insert(const scope& s, const entry& e, const version_note& n) { return *write(kind::insert, s, &e, e.id, std::nullopt, &n); }
    std::optional<std::uint64_t> insert_if(const scope& s, const entry& e, std::uint64_t expected, const version_note& n) {
        return write(kind::insert, s, &e, e.id, expected, &n);
    }
    std::uint64_t update(const scope& s, const entry& e, const version_note& n) { return *write(kind::update, s, &e, e.id, std::nullopt, &n); }
    std::uint64_t erase(const scope& s, std::string_view id, const version_note& n) { return *write(kind::erase, s, nullptr, id, std::nullopt, &n); }

private:
    enum class kind { insert, update, erase };

    static std::string tags_json(const std::vector<std::string>& tags) {
        json t = json::array();
        for (const auto& x : tags) t.push_back(x);
        return t.dump(-1, ' ', false, json::error_handler_t::replace);
    }

    /// The version of a write, under the scope's version lock the write holds.
    static void record(ania::detail::pg_connection& c, const std::string& sc, const std::string& key, const version_note& n) {
        ania::detail::pg_params k;
        k.text(sc);
        k.text(key);
        const auto r = c.exec("SELECT COALESCE(MAX(seq), 0) FROM ania_memory_history WHERE scope = $1 AND id = $2", k, "memory history");
        long long last = std::stoll(PQgetvalue(r.get(), 0, 0));
        const auto put = [&](const memory_version& v, long long seq) {
            ania::detail::pg_params p;
            const std::string seq_text = std::to_string(seq), tags = tags_json(v.tags), kind_text(to_string(v.kind));
            p.text(sc);
            p.text(key);
            p.text(seq_text);
            p.text(kind_text);
            p.text(v.origin.actor);
            p.text(v.origin.session);
            p.text(v.origin.tool_call_id);
            p.text(v.at);
            p.text(v.user_id);
            p.text(v.content);
            p.text(tags);
            c.exec("INSERT INTO ania_memory_history(scope, id, seq, kind, actor, session, tool_call_id, at, user_id, content, tags) "
                   "VALUES ($1, $2, $3::bigint, $4, $5, $6, $7, $8, $9, $10, $11::jsonb)",
                   p, "memory version record");
        };
        if (last == 0 && n.previous) put(n.baseline(), ++last);
        put(n.version, ++last);
        ania::detail::pg_params d;
        const std::string floor = std::to_string(last - static_cast<long long>(n.keep));
        d.text(sc);
        d.text(key);
        d.text(floor);
        c.exec("DELETE FROM ania_memory_history WHERE scope = $1 AND id = $2 AND seq <= $3::bigint", d, "memory versions trim");
    }

    std::optional<std::uint64_t> write(kind k, const scope& s, const entry* e, std::string_view id, std::optional<std::uint64_t> expected,
                                       const version_note* note) {
        if (!enabled_) return std::uint64_t{0};
        const std::string sc = s.str(), key(id);
        std::string tags, emb;
        if (e) {
            tags = tags_json(e->tags);
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
        const bool changed = std::string_view(PQcmdTuples(r.get())) == "1";
        if (e && !changed) throw error(errc::store_error, "memory " + e->id + " not found in " + sc);
        if (note && changed) record(*c, sc, key, *note);
        const auto nv = c->exec("UPDATE ania_memory_version SET version = version + 1 WHERE scope = $1 RETURNING version", v, "memory version");
        const std::uint64_t out = static_cast<std::uint64_t>(std::stoll(PQgetvalue(nv.get(), 0, 0)));
        t.commit();
        return out;
    }

    mutable ania::detail::pg_pool pool_;
    bool enabled_ = false;
};

static_assert(versioned_memory_backend<postgres_backend> && history_memory_backend<postgres_backend>);

/// The spec's memory on PostgreSQL.
struct postgres_memory_traits : default_memory_traits {
    using backend = postgres_backend;
};
using postgres_manager = basic_manager<postgres_memory_traits>;  // memory/manager.hpp

} // namespace ania::memory

#if !ANIA_HEADER_ONLY  // no compiled library for PostgreSQL: its manager is instantiated where it is used
#include <ania/memory/manager-inl.hpp>
#endif
