// ania/store/postgres_store.hpp -- history in PostgreSQL rows (SPEC §2), for bots that run several processes
// or machines over one database. Needs libpq: `dependency('ania-postgres')`.
// SPDX-License-Identifier: MIT
//
// The spec's two tables in PostgreSQL types, plus an `epoch` per session that every write other than an
// append bumps, so that a writer can tell "only appends happened since I read" from "someone replaced it":
//
//   ania_chat_session(session_id BYTEA PK, msg_count BIGINT, epoch BIGINT, created_at, updated_at)
//   ania_chat_message(session_id BYTEA, seq BIGINT, role TEXT, content TEXT, created_at, PK(session_id, seq))
//
// session_id is BYTEA because a session id is any byte string (NUL and invalid UTF-8 included), which TEXT
// cannot hold. msg_count is the sequence allocator (SPEC §2): an append advances it and inserts its rows in
// ONE statement (one round trip; the session row's lock orders concurrent appends, so seq is contiguous per
// session across processes); a replace renumbers from 0; drop_front keeps the survivors' seq.
#pragma once

#include <cstdint>
#include <mutex>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

#include <ania/concepts.hpp>
#include <ania/detail/postgres.hpp>
#include <ania/error.hpp>
#include <ania/json.hpp>
#include <ania/log.hpp>
#include <ania/message.hpp>

namespace ania {

struct postgres_store_options : postgres_options {
    parse_limits limits{};  ///< applied to every stored row when loading
    write_options write{};  ///< how messages are serialised into `content`
};

/// Where a session's history stands: what a compare-and-swap replace is conditioned on.
struct history_version {
    std::int64_t msg_count = 0;  ///< the next seq (appends advance it)
    std::int64_t epoch = 0;      ///< bumped by replace, clear and drop_front
    friend bool operator==(const history_version&, const history_version&) = default;
};

/// A load and the version it saw, read in one statement (one snapshot).
struct versioned_history {
    std::vector<message> messages;
    history_version version;
};

enum class replace_status : std::uint8_t {
    replaced,  ///< the session was at the expected version: the new history is stored
    conflict,  ///< it was not (another process appended, replaced or cleared): nothing written; reload and retry
};

namespace detail {

inline constexpr const char* postgres_history_schema =
    "CREATE TABLE IF NOT EXISTS ania_chat_session("
    " session_id BYTEA PRIMARY KEY,"
    " msg_count BIGINT NOT NULL DEFAULT 0,"
    " epoch BIGINT NOT NULL DEFAULT 0,"
    " created_at TIMESTAMPTZ NOT NULL DEFAULT now(),"
    " updated_at TIMESTAMPTZ NOT NULL DEFAULT now());"
    "CREATE TABLE IF NOT EXISTS ania_chat_message("
    " session_id BYTEA NOT NULL,"
    " seq BIGINT NOT NULL,"
    " role TEXT NOT NULL,"
    " content TEXT NOT NULL,"
    " created_at TIMESTAMPTZ NOT NULL DEFAULT now(),"
    " PRIMARY KEY(session_id, seq));"
    "CREATE TABLE IF NOT EXISTS ania_chat_quarantine("
    " session_id BYTEA NOT NULL,"
    " seq BIGINT NOT NULL,"
    " content TEXT NOT NULL,"
    " created_at TIMESTAMPTZ NOT NULL,"
    " quarantined_at TIMESTAMPTZ NOT NULL DEFAULT now(),"
    " reason TEXT NOT NULL);";

} // namespace detail

/// A history_store (and prefix_dropping_store) on PostgreSQL. Safe to share between threads (a connection
/// pool) and between processes and machines (every write is one transaction; appends are ordered by the
/// session row's lock). A lost connection fails the call in flight with store_io (transient) and the next
/// call reconnects. The schema is created at construction if missing (serialised between processes by a
/// transaction-level advisory lock, which survives a transaction-pooling PgBouncer).
///
/// A stored row that does not parse (another tool or version wrote it) is skipped by load and logged; when a
/// replace or drop_front of that session would delete it, it is first copied to ania_chat_quarantine.
class postgres_store {
public:
    explicit postgres_store(postgres_store_options opt = {}) : opt_(std::move(opt)), pool_(opt_) {
        auto c = pool_.use();
        detail::pg_transaction t(*c, "schema");
        c->exec_simple("SELECT pg_advisory_xact_lock(7309447127341220736)", "schema lock");  // 'ania' history
        c->exec_simple(detail::postgres_history_schema, "create the tables");
        t.commit();
    }

    [[nodiscard]] std::vector<message> load(std::string_view session) { return load_versioned(session).messages; }

    /// The messages in seq order and the version they are at, from one snapshot.
    [[nodiscard]] versioned_history load_versioned(std::string_view session) {
        detail::pg_params p;
        p.bytes(session);
        detail::pg_result r;
        {
            auto c = pool_.use();
            r = c->exec("SELECT s.msg_count, s.epoch, m.seq, m.content FROM ania_chat_session s "
                        "LEFT JOIN ania_chat_message m ON m.session_id = s.session_id "
                        "WHERE s.session_id = $1 ORDER BY m.seq",
                        p, "load");
        }
        versioned_history out;
        const int n = PQntuples(r.get());
        if (n == 0) return out;
        out.version = {std::stoll(PQgetvalue(r.get(), 0, 0)), std::stoll(PQgetvalue(r.get(), 0, 1))};
        out.messages.reserve(static_cast<std::size_t>(n));
        std::vector<std::int64_t> skipped;
        for (int i = 0; i < n; ++i) {
            if (PQgetisnull(r.get(), i, 3)) continue;  // a session row without messages
            try {
                out.messages.push_back(parse_message(std::string_view(PQgetvalue(r.get(), i, 3),
                                                                      static_cast<std::size_t>(PQgetlength(r.get(), i, 3))),
                                                     opt_.limits));
            } catch (const std::exception& e) {
                skipped.push_back(std::stoll(PQgetvalue(r.get(), i, 2)));
                log_to(opt_.log, log_level::warn, "postgres_store: skipped stored message " + std::to_string(i) + " of a session: " + e.what());
            }
        }
        if (!skipped.empty()) {
            std::lock_guard l(mu_);
            auto& s = skipped_[std::string(session)];
            s.insert(s.end(), skipped.begin(), skipped.end());
        }
        return out;
    }

    /// Appends in one statement: the session's msg_count advanced by n and the n rows inserted, atomically.
    void append(std::string_view session, std::span<const message> msgs) {
        if (msgs.empty()) return;
        std::string roles, contents;
        rows(msgs, roles, contents);
        const std::string n = std::to_string(msgs.size());
        detail::pg_params p;
        p.bytes(session);
        p.text(n);
        p.text(roles);
        p.text(contents);
        auto c = pool_.use();
        c->exec("WITH s AS ("
                " INSERT INTO ania_chat_session(session_id, msg_count) VALUES ($1, $2::bigint)"
                " ON CONFLICT (session_id) DO UPDATE SET msg_count = ania_chat_session.msg_count + $2::bigint, updated_at = now()"
                " RETURNING msg_count - $2::bigint AS base)"
                " INSERT INTO ania_chat_message(session_id, seq, role, content)"
                " SELECT $1, s.base + t.ord - 1, t.role, t.content FROM s, unnest($3::text[], $4::text[]) WITH ORDINALITY AS t(role, content, ord)",
                p, "append");
    }

    /// Overwrites the history, renumbering seq from 0, in one transaction.
    void replace(std::string_view session, std::span<const message> msgs) { (void)write_all(session, msgs, std::nullopt); }

    /// Compare-and-swap: replaces only if the session is still at `expected` (as load_versioned saw it), so a
    /// compression in one process cannot erase a turn another process appended meanwhile.
    [[nodiscard]] replace_status replace_if(std::string_view session, std::span<const message> msgs, const history_version& expected) {
        return write_all(session, msgs, expected);
    }

    /// Forgets the session's messages (its row stays, at msg_count 0 and a new epoch).
    void clear(std::string_view session) { (void)write_all(session, {}, std::nullopt); }

    /// Drops the first k stored messages (the survivors keep their seq; msg_count stays the allocator).
    void drop_front(std::string_view session, std::size_t k) {
        if (k == 0) return;
        detail::pg_params p;
        p.bytes(session);
        const std::string kk = std::to_string(k);
        p.text(kk);
        auto c = pool_.use();
        detail::pg_transaction t(*c, "drop_front");
        if (!lock_row(*c, session)) return;
        quarantine(*c, session, "dropped by drop_front", [&](const std::string& seqs) {
            return "seq = ANY('" + seqs + "'::bigint[]) AND seq IN (SELECT seq FROM ania_chat_message WHERE session_id = $1 "
                   "ORDER BY seq LIMIT " + kk + ")";
        });
        c->exec("DELETE FROM ania_chat_message WHERE session_id = $1 AND seq IN "
                "(SELECT seq FROM ania_chat_message WHERE session_id = $1 ORDER BY seq LIMIT $2::bigint)",
                p, "drop_front");
        bump(*c, session, std::nullopt);
        t.commit();
    }

    /// The version the session is at (0, 0 for an unknown one).
    [[nodiscard]] history_version version(std::string_view session) {
        detail::pg_params p;
        p.bytes(session);
        auto c = pool_.use();
        const detail::pg_result r = c->exec("SELECT msg_count, epoch FROM ania_chat_session WHERE session_id = $1", p, "version");
        if (PQntuples(r.get()) == 0) return {};
        return {std::stoll(PQgetvalue(r.get(), 0, 0)), std::stoll(PQgetvalue(r.get(), 0, 1))};
    }

    [[nodiscard]] const postgres_store_options& options() const noexcept { return opt_; }

private:
    void rows(std::span<const message> msgs, std::string& roles, std::string& contents) const {
        std::vector<std::string> r, c;
        r.reserve(msgs.size());
        c.reserve(msgs.size());
        for (const message& m : msgs) {
            r.emplace_back(to_string(m.role));
            c.push_back(dump(m, opt_.write));
        }
        detail::append_pg_text_array(roles, r);
        detail::append_pg_text_array(contents, c);
    }

    /// Takes the session row's lock (creating the row); false when there is nothing to lock and nothing to do.
    static bool lock_row(detail::pg_connection& c, std::string_view session) {
        detail::pg_params p;
        p.bytes(session);
        c.exec("INSERT INTO ania_chat_session(session_id) VALUES ($1) ON CONFLICT (session_id) DO NOTHING", p, "lock the session");
        const detail::pg_result r = c.exec("SELECT 1 FROM ania_chat_session WHERE session_id = $1 FOR UPDATE", p, "lock the session");
        return PQntuples(r.get()) == 1;
    }

    static void bump(detail::pg_connection& c, std::string_view session, std::optional<std::int64_t> count) {
        detail::pg_params p;
        p.bytes(session);
        const std::string n = count ? std::to_string(*count) : std::string();
        if (count) {
            p.text(n);
            c.exec("UPDATE ania_chat_session SET msg_count = $2::bigint, epoch = epoch + 1, updated_at = now() WHERE session_id = $1", p, "update the session");
        } else {
            c.exec("UPDATE ania_chat_session SET epoch = epoch + 1, updated_at = now() WHERE session_id = $1", p, "update the session");
        }
    }

    /// Copies the rows of `session` that a load could not parse, and that `where(seqs)` selects, to quarantine.
    template <class Where>
    void quarantine(detail::pg_connection& c, std::string_view session, const char* reason, Where&& where) {
        std::vector<std::int64_t> seqs;
        {
            std::lock_guard l(mu_);
            const auto it = skipped_.find(std::string(session));
            if (it == skipped_.end()) return;
            seqs = std::move(it->second);
            skipped_.erase(it);
        }
        std::string list = "{";
        for (std::size_t i = 0; i < seqs.size(); ++i) list += (i ? "," : "") + std::to_string(seqs[i]);
        list += "}";
        detail::pg_params p;
        p.bytes(session);
        const std::string why = reason;
        p.text(why);
        const std::string sql = "INSERT INTO ania_chat_quarantine(session_id, seq, content, created_at, reason) "
                                "SELECT session_id, seq, content, created_at, $2 FROM ania_chat_message WHERE session_id = $1 AND " +
                                where(list);
        const detail::pg_result r = c.exec(sql.c_str(), p, "quarantine");
        const char* moved = PQcmdTuples(r.get());
        if (moved && *moved && std::string_view(moved) != "0")
            log_to(opt_.log, log_level::warn, std::string("postgres_store: ") + moved + " unreadable stored messages moved to ania_chat_quarantine");
    }

    replace_status write_all(std::string_view session, std::span<const message> msgs, const std::optional<history_version>& expected) {
        std::string roles, contents;
        rows(msgs, roles, contents);
        auto c = pool_.use();
        detail::pg_transaction t(*c, "replace");
        lock_row(*c, session);
        if (expected) {
            detail::pg_params p;
            p.bytes(session);
            const detail::pg_result r = c->exec("SELECT msg_count, epoch FROM ania_chat_session WHERE session_id = $1", p, "replace");
            const history_version now{std::stoll(PQgetvalue(r.get(), 0, 0)), std::stoll(PQgetvalue(r.get(), 0, 1))};
            if (now != *expected) return replace_status::conflict;  // rolled back by the guard
        }
        quarantine(*c, session, msgs.empty() ? "cleared" : "replaced", [](const std::string& seqs) { return "seq = ANY('" + seqs + "'::bigint[])"; });
        detail::pg_params p;
        p.bytes(session);
        c->exec("DELETE FROM ania_chat_message WHERE session_id = $1", p, "replace");
        if (!msgs.empty()) {
            p.text(roles);
            p.text(contents);
            c->exec("INSERT INTO ania_chat_message(session_id, seq, role, content) "
                    "SELECT $1, t.ord - 1, t.role, t.content FROM unnest($2::text[], $3::text[]) WITH ORDINALITY AS t(role, content, ord)",
                    p, "replace");
        }
        bump(*c, session, static_cast<std::int64_t>(msgs.size()));
        t.commit();
        return replace_status::replaced;
    }

    postgres_store_options opt_;
    detail::pg_pool pool_;
    std::mutex mu_;
    std::unordered_map<std::string, std::vector<std::int64_t>> skipped_;  // seq of rows a load could not parse
};

static_assert(prefix_dropping_store<postgres_store>);

} // namespace ania
