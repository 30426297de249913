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

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <limits>
#include <cstdio>
#include <mutex>
#include <random>
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
#include <ania/history/archive.hpp>
#include <ania/json.hpp>
#include <ania/json_writer.hpp>
#include <ania/log.hpp>
#include <ania/message.hpp>

#include <unistd.h>

namespace ania {

struct postgres_store_options : postgres_options {
    parse_limits limits{};  ///< applied to every stored row when loading
    write_options write{};  ///< how messages are serialised into `content`
    archive_options archive{};  ///< the bounds of each session's archive (ania_chat_archive)
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

/// This process's right to answer one session, for `ttl` from when it was taken or last renewed. While a
/// store holds a lease on a session, every write it makes to that session is fenced by it: if the lease has
/// expired or another process took the session since, the write is rejected (errc::stale_writer) instead of
/// interleaving with the new owner's.
struct session_lease {
    std::string session;
    std::string owner;          ///< this store's token
    std::int64_t epoch = 0;     ///< bumped each time the session changes hands
    std::chrono::milliseconds ttl{};
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
    " reason TEXT NOT NULL);"
    "CREATE TABLE IF NOT EXISTS ania_session_lease("
    " session_id BYTEA PRIMARY KEY,"
    " owner TEXT NOT NULL,"
    " epoch BIGINT NOT NULL,"
    " expires_at TIMESTAMPTZ NOT NULL);"
    // Non-destructive compaction (archiving_store); archived_at is the library's fixed-width UTC text.
    "CREATE TABLE IF NOT EXISTS ania_chat_archive("
    " session_id BYTEA NOT NULL,"
    " seq BIGINT NOT NULL,"
    " role TEXT NOT NULL,"
    " content TEXT NOT NULL,"
    " bytes BIGINT NOT NULL,"
    " archived_at TEXT NOT NULL,"
    " PRIMARY KEY(session_id, seq));"
    "CREATE TABLE IF NOT EXISTS ania_chat_archive_summary("
    " session_id BYTEA NOT NULL,"
    " first_seq BIGINT NOT NULL,"
    " count BIGINT NOT NULL,"
    " summary TEXT NOT NULL,"
    " archived_at TEXT NOT NULL,"
    " PRIMARY KEY(session_id, first_seq));"
    "CREATE TABLE IF NOT EXISTS ania_chat_archive_state("
    " session_id BYTEA PRIMARY KEY,"
    " first_seq BIGINT NOT NULL,"
    " next_seq BIGINT NOT NULL,"
    " messages BIGINT NOT NULL,"
    " bytes BIGINT NOT NULL);";

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
    explicit postgres_store(postgres_store_options opt = {}) : opt_(std::move(opt)), pool_(opt_), owner_(make_owner()) {
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
        out.version = version_at(r);
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
        const auto fence = fence_of(session);
        auto c = pool_.use();
        if (!fence) {
            c->exec("WITH s AS ("
                    " INSERT INTO ania_chat_session(session_id, msg_count) VALUES ($1, $2::bigint)"
                    " ON CONFLICT (session_id) DO UPDATE SET msg_count = ania_chat_session.msg_count + $2::bigint, updated_at = now()"
                    " RETURNING msg_count - $2::bigint AS base)"
                    " INSERT INTO ania_chat_message(session_id, seq, role, content)"
                    " SELECT $1, s.base + t.ord - 1, t.role, t.content FROM s, unnest($3::text[], $4::text[]) WITH ORDINALITY AS t(role, content, ord)",
                    p, "append");
            return;
        }
        // Fenced: the lease row is share-locked in the same statement, so a new owner's takeover (which
        // updates that row) cannot slip between the check and the insert.
        const std::string epoch = std::to_string(fence->second);
        p.text(fence->first);
        p.text(epoch);
        const detail::pg_result r = c->exec(
            "WITH f AS (SELECT 1 FROM ania_session_lease WHERE session_id = $1 AND owner = $5 AND epoch = $6::bigint"
            " AND expires_at > now() FOR SHARE),"
            " s AS (INSERT INTO ania_chat_session(session_id, msg_count) SELECT $1, $2::bigint FROM f"
            " ON CONFLICT (session_id) DO UPDATE SET msg_count = ania_chat_session.msg_count + $2::bigint, updated_at = now()"
            " RETURNING msg_count - $2::bigint AS base)"
            " INSERT INTO ania_chat_message(session_id, seq, role, content)"
            " SELECT $1, s.base + t.ord - 1, t.role, t.content FROM s, unnest($3::text[], $4::text[]) WITH ORDINALITY AS t(role, content, ord)",
            p, "append");
        if (std::string_view(PQcmdTuples(r.get())) == "0") stale();
    }

    // ---- leases ---------------------------------------------------------------------------------------

    /// Takes the session for `ttl` if nobody holds it (or its holder's lease expired: a crashed or paused
    /// process), using the database's clock. From then on this store's writes to the session are fenced.
    [[nodiscard]] std::optional<session_lease> try_lease(std::string_view session, std::chrono::milliseconds ttl) {
        detail::pg_params p;
        p.bytes(session);
        p.text(owner_);
        const std::string ms = std::to_string(ttl.count());
        p.text(ms);
        auto c = pool_.use();
        const detail::pg_result r = c->exec(
            "INSERT INTO ania_session_lease(session_id, owner, epoch, expires_at)"
            " VALUES ($1, $2, 1, now() + $3::bigint * interval '1 millisecond')"
            " ON CONFLICT (session_id) DO UPDATE SET owner = EXCLUDED.owner,"
            "  epoch = CASE WHEN ania_session_lease.owner = EXCLUDED.owner AND ania_session_lease.expires_at > now()"
            "          THEN ania_session_lease.epoch ELSE ania_session_lease.epoch + 1 END,"
            "  expires_at = EXCLUDED.expires_at"
            " WHERE ania_session_lease.expires_at <= now() OR ania_session_lease.owner = EXCLUDED.owner"
            " RETURNING epoch",
            p, "take a lease");
        if (PQntuples(r.get()) != 1) return std::nullopt;
        session_lease l{std::string(session), owner_, std::stoll(PQgetvalue(r.get(), 0, 0)), ttl};
        std::lock_guard g(mu_);
        fences_[l.session] = {l.owner, l.epoch};
        return l;
    }

    /// Extends the lease by its ttl from now (call it at a third of the ttl). False when it was lost: the
    /// session's writes stay fenced by the lost lease, so they fail until release().
    [[nodiscard]] bool renew(const session_lease& l) {
        detail::pg_params p;
        p.bytes(l.session);
        p.text(l.owner);
        const std::string epoch = std::to_string(l.epoch), ms = std::to_string(l.ttl.count());
        p.text(epoch);
        p.text(ms);
        auto c = pool_.use();
        const detail::pg_result r = c->exec("UPDATE ania_session_lease SET expires_at = now() + $4::bigint * interval '1 millisecond'"
                                            " WHERE session_id = $1 AND owner = $2 AND epoch = $3::bigint AND expires_at > now()",
                                            p, "renew a lease");
        return std::string_view(PQcmdTuples(r.get())) == "1";
    }

    /// Gives the session back (only this lease: a newer owner's is untouched); its writes are no longer fenced.
    void release(const session_lease& l) {
        {
            std::lock_guard g(mu_);
            if (const auto it = fences_.find(l.session); it != fences_.end() && it->second.second == l.epoch) fences_.erase(it);
        }
        detail::pg_params p;
        p.bytes(l.session);
        p.text(l.owner);
        const std::string epoch = std::to_string(l.epoch);
        p.text(epoch);
        auto c = pool_.use();
        c->exec("UPDATE ania_session_lease SET expires_at = '-infinity' WHERE session_id = $1 AND owner = $2 AND epoch = $3::bigint", p,
                "release a lease");  // the row stays: epochs never repeat, so an old fence can never match again
    }

    /// This store's owner token (host, pid and a random part).
    [[nodiscard]] const std::string& owner() const noexcept { return owner_; }

    /// Overwrites the history, renumbering seq from 0, in one transaction.
    void replace(std::string_view session, std::span<const message> msgs) { (void)write_all(session, msgs, std::nullopt); }

    /// Compare-and-swap: replaces only if the session is still at `expected` (as load_versioned saw it), so a
    /// compression in one process cannot erase a turn another process appended meanwhile.
    [[nodiscard]] replace_status replace_if(std::string_view session, std::span<const message> msgs, const history_version& expected) {
        return write_all(session, msgs, expected);
    }

    /// Compaction without lost updates: replaces the rows a snapshot saw (`seen`, from load_versioned) by
    /// `prefix` and keeps every row appended since, in one transaction, if nothing but appends happened
    /// since (same epoch). The summary goes in front of the turns that arrived while it was being written;
    /// conflict (nothing written) if the session was replaced, cleared or cut meanwhile.
    [[nodiscard]] replace_status replace_prefix_if(std::string_view session, std::span<const message> prefix, const history_version& seen) {
        std::string roles, contents;
        rows(prefix, roles, contents);
        auto c = pool_.use();
        detail::pg_transaction t(*c, "replace_prefix_if");
        const history_version now = lock_row(*c, session);
        check_fence(*c, session);
        detail::pg_params p;
        p.bytes(session);
        if (now.epoch != seen.epoch || now.msg_count < seen.msg_count) return replace_status::conflict;
        quarantine(*c, session, "replaced by a compaction", [&](const std::string& seqs) {
            return "seq = ANY('" + seqs + "'::bigint[]) AND seq < " + std::to_string(seen.msg_count);
        });
        const std::string upto = std::to_string(seen.msg_count), n = std::to_string(prefix.size());
        p.text(upto);
        c->exec("DELETE FROM ania_chat_message WHERE session_id = $1 AND seq < $2::bigint", p, "replace_prefix_if");
        if (!prefix.empty()) {  // just below the survivors: seq seen.msg_count - n .. seen.msg_count - 1 (all freed above)
            p.text(n);
            p.text(roles);
            p.text(contents);
            c->exec("INSERT INTO ania_chat_message(session_id, seq, role, content) "
                    "SELECT $1, $2::bigint - $3::bigint + t.ord - 1, t.role, t.content FROM unnest($4::text[], $5::text[]) WITH ORDINALITY AS t(role, content, ord)",
                    p, "replace_prefix_if");
        }
        bump(*c, session, std::nullopt);  // not an append: a second compaction from the same snapshot conflicts
        t.commit();
        return replace_status::replaced;
    }

    /// Forgets the session's messages (its row stays, at msg_count 0 and a new epoch), and its archive unless
    /// options().archive.keep_on_clear.
    void clear(std::string_view session) { (void)write_all(session, {}, std::nullopt, nullptr, !opt_.archive.keep_on_clear); }

    // archiving_store (see <ania/concepts.hpp>): each in the transaction of the history's write.
    void replace_archiving(std::string_view session, std::span<const message> msgs, const archive_batch& batch) {
        (void)write_all(session, msgs, std::nullopt, &batch);
    }
    void drop_front_archiving(std::string_view session, std::size_t k, const archive_batch& batch) { drop(session, k, &batch); }
    void clear_archive(std::string_view session) {
        auto c = pool_.use();
        detail::pg_transaction t(*c, "clear_archive");
        forget_archive(*c, session);
        t.commit();
    }
    /// Rows that do not parse are skipped (counted in archive_slice::skipped) and logged.
    [[nodiscard]] archive_slice read_archive(std::string_view session, std::int64_t from, std::size_t count) {
        archive_slice out;
        detail::pg_params p;
        p.bytes(session);
        const std::string f = std::to_string(from);
        const std::string n = std::to_string(std::min<std::size_t>(count, static_cast<std::size_t>(std::numeric_limits<std::int64_t>::max())));
        p.text(f);
        p.text(n);
        detail::pg_result r, sums;
        {
            auto c = pool_.use();
            r = c->exec("SELECT s.first_seq, s.next_seq, a.seq, a.archived_at, a.content FROM ania_chat_archive_state s "
                        "LEFT JOIN LATERAL (SELECT seq, archived_at, content FROM ania_chat_archive x WHERE x.session_id = s.session_id "
                        " AND x.seq >= GREATEST($2::bigint, s.first_seq) ORDER BY x.seq LIMIT $3::bigint) a ON true "
                        "WHERE s.session_id = $1 ORDER BY a.seq",
                        p, "read_archive");
            const int rows = PQntuples(r.get());
            if (rows == 0) return out;
            out.first_seq = std::stoll(PQgetvalue(r.get(), 0, 0));
            out.next_seq = std::stoll(PQgetvalue(r.get(), 0, 1));
            if (PQgetisnull(r.get(), 0, 2)) return out;
            const std::string lo = PQgetvalue(r.get(), 0, 2), hi = PQgetvalue(r.get(), rows - 1, 2);
            detail::pg_params q;
            q.bytes(session);
            q.text(lo);
            q.text(hi);
            sums = c->exec("SELECT first_seq, count, summary, archived_at FROM ania_chat_archive_summary WHERE session_id = $1 "
                           "AND first_seq <= $3::bigint AND first_seq + count > $2::bigint ORDER BY first_seq",
                           q, "read_archive");
        }
        const auto text = [](const detail::pg_result& res, int row, int col) {
            return std::string(PQgetvalue(res.get(), row, col), static_cast<std::size_t>(PQgetlength(res.get(), row, col)));
        };
        for (int i = 0; i < PQntuples(r.get()); ++i) {
            const std::int64_t seq = std::stoll(PQgetvalue(r.get(), i, 2));
            try {
                out.messages.push_back({seq, text(r, i, 3), parse_message(text(r, i, 4), opt_.limits)});
            } catch (const std::exception& e) {
                ++out.skipped;
                log_to(opt_.log, log_level::warn, "postgres_store: skipped archived message " + std::to_string(seq) + " of a session: " + e.what());
            }
        }
        for (int i = 0; i < PQntuples(sums.get()); ++i)
            out.summaries.push_back({std::stoll(PQgetvalue(sums.get(), i, 0)), std::stoll(PQgetvalue(sums.get(), i, 1)), text(sums, i, 2),
                                     text(sums, i, 3)});
        return out;
    }

    /// Drops the first k stored messages (the survivors keep their seq; msg_count stays the allocator).
    void drop_front(std::string_view session, std::size_t k) { drop(session, k, nullptr); }

private:
    void drop(std::string_view session, std::size_t k, const archive_batch* batch) {
        if (k == 0 && !batch) return;
        detail::pg_params p;
        p.bytes(session);
        const std::string kk = std::to_string(k);
        p.text(kk);
        auto c = pool_.use();
        detail::pg_transaction t(*c, "drop_front");
        (void)lock_row(*c, session);
        check_fence(*c, session);
        quarantine(*c, session, "dropped by drop_front", [&](const std::string& seqs) {
            return "seq = ANY('" + seqs + "'::bigint[]) AND seq IN (SELECT seq FROM ania_chat_message WHERE session_id = $1 "
                   "ORDER BY seq LIMIT " + kk + ")";
        });
        c->exec("DELETE FROM ania_chat_message WHERE session_id = $1 AND seq IN "
                "(SELECT seq FROM ania_chat_message WHERE session_id = $1 ORDER BY seq LIMIT $2::bigint)",
                p, "drop_front");
        bump(*c, session, std::nullopt);
        if (batch) archive(*c, session, *batch);
        t.commit();
    }

public:
    /// The version the session is at (0, 0 for an unknown one).
    [[nodiscard]] history_version version(std::string_view session) {
        detail::pg_params p;
        p.bytes(session);
        auto c = pool_.use();
        const detail::pg_result r = c->exec("SELECT msg_count, epoch FROM ania_chat_session WHERE session_id = $1", p, "version");
        if (PQntuples(r.get()) == 0) return {};
        return version_at(r);
    }

    [[nodiscard]] const postgres_store_options& options() const noexcept { return opt_; }

private:
    void rows(std::span<const message> msgs, std::string& roles, std::string& contents) const {
        std::vector<std::string> r, c;
        r.reserve(msgs.size());
        c.reserve(msgs.size());
        for (const message& m : msgs) {
            r.emplace_back(to_string(m.role));
            std::string& row = c.emplace_back();  // dump's bytes by the direct writer (json_writer.hpp)
            row.reserve(m.content.size() + 48);
            append_json(row, m, opt_.write);
        }
        detail::append_pg_text_array(roles, r);
        detail::append_pg_text_array(contents, c);
    }

    /// msg_count and epoch of the first row of a result that selected them in that order.
    [[nodiscard]] static history_version version_at(const detail::pg_result& r) {
        return {std::stoll(PQgetvalue(r.get(), 0, 0)), std::stoll(PQgetvalue(r.get(), 0, 1))};
    }

    /// Takes the session row's lock (creating the row) and returns the version it is at, under that lock.
    static history_version lock_row(detail::pg_connection& c, std::string_view session) {
        detail::pg_params p;
        p.bytes(session);
        c.exec("INSERT INTO ania_chat_session(session_id) VALUES ($1) ON CONFLICT (session_id) DO NOTHING", p, "lock the session");
        return version_at(c.exec("SELECT msg_count, epoch FROM ania_chat_session WHERE session_id = $1 FOR UPDATE", p, "lock the session"));
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

    /// Inside a write's transaction (the session row locked): `batch` archived, then the archive bounded.
    void archive(detail::pg_connection& c, std::string_view session, const archive_batch& batch) {
        if (batch.messages.empty()) return;
        std::string roles, contents, sizes = "{";
        rows(batch.messages, roles, contents);
        std::int64_t added = 0;
        for (std::size_t i = 0; i < batch.messages.size(); ++i) {
            const std::size_t b = archived_bytes(batch.messages[i]);
            added += static_cast<std::int64_t>(b);
            sizes += (i ? "," : "") + std::to_string(b);
        }
        sizes += "}";
        detail::pg_params p;
        p.bytes(session);
        c.exec("INSERT INTO ania_chat_archive_state(session_id, first_seq, next_seq, messages, bytes) VALUES ($1, 0, 0, 0, 0) "
               "ON CONFLICT (session_id) DO NOTHING", p, "archive");
        const detail::pg_result st = c.exec("SELECT first_seq, next_seq, messages, bytes FROM ania_chat_archive_state WHERE session_id = $1 FOR UPDATE",
                                            p, "archive");
        std::int64_t first = std::stoll(PQgetvalue(st.get(), 0, 0)), next = std::stoll(PQgetvalue(st.get(), 0, 1)),
                     count = std::stoll(PQgetvalue(st.get(), 0, 2)), bytes = std::stoll(PQgetvalue(st.get(), 0, 3));
        const std::string base = std::to_string(next), n = std::to_string(batch.messages.size());
        {
            detail::pg_params q;
            q.bytes(session);
            q.text(base);
            q.text(roles);
            q.text(contents);
            q.text(sizes);
            q.text(batch.archived_at);
            q.text(n);
            q.text(batch.summary);
            c.exec("WITH m AS (INSERT INTO ania_chat_archive(session_id, seq, role, content, bytes, archived_at) "
                   "SELECT $1, $2::bigint + t.ord - 1, t.role, t.content, t.bytes, $6 FROM unnest($3::text[], $4::text[], $5::bigint[]) "
                   "WITH ORDINALITY AS t(role, content, bytes, ord)) "
                   "INSERT INTO ania_chat_archive_summary(session_id, first_seq, count, summary, archived_at) VALUES ($1, $2::bigint, $7::bigint, $8, $6)",
                   q, "archive");
        }
        next += static_cast<std::int64_t>(batch.messages.size());
        count += static_cast<std::int64_t>(batch.messages.size());
        bytes += added;
        const archive_options& cap = opt_.archive;
        if ((cap.max_messages && static_cast<std::size_t>(count) > cap.max_messages) ||
            (cap.max_bytes && static_cast<std::size_t>(bytes) > cap.max_bytes)) {
            const detail::pg_result all = c.exec("SELECT bytes FROM ania_chat_archive WHERE session_id = $1 ORDER BY seq", p, "bound the archive");
            std::vector<std::size_t> each(static_cast<std::size_t>(PQntuples(all.get())));
            for (std::size_t i = 0; i < each.size(); ++i) each[i] = std::stoull(PQgetvalue(all.get(), static_cast<int>(i), 0));
            const detail::archive_trim trim = detail::archive_cut(first, each.size(), static_cast<std::size_t>(bytes), cap,
                                                                  [&](std::size_t i) { return each[i]; });
            count -= trim.first_seq - first;
            first = trim.first_seq;
            bytes = static_cast<std::int64_t>(trim.bytes);
            detail::pg_params q;
            q.bytes(session);
            const std::string below = std::to_string(first);
            q.text(below);
            c.exec("DELETE FROM ania_chat_archive WHERE session_id = $1 AND seq < $2::bigint", q, "bound the archive");
            c.exec("DELETE FROM ania_chat_archive_summary WHERE session_id = $1 AND first_seq + count <= $2::bigint", q, "bound the archive");
        }
        const std::string f = std::to_string(first), nx = std::to_string(next), ct = std::to_string(count), by = std::to_string(bytes);
        p.text(f);
        p.text(nx);
        p.text(ct);
        p.text(by);
        c.exec("UPDATE ania_chat_archive_state SET first_seq = $2::bigint, next_seq = $3::bigint, messages = $4::bigint, bytes = $5::bigint "
               "WHERE session_id = $1", p, "archive");
    }

    /// Inside a transaction: the session's archived messages and summaries deleted; the numbers stay.
    static void forget_archive(detail::pg_connection& c, std::string_view session) {
        detail::pg_params p;
        p.bytes(session);
        c.exec("DELETE FROM ania_chat_archive WHERE session_id = $1", p, "clear the archive");
        c.exec("DELETE FROM ania_chat_archive_summary WHERE session_id = $1", p, "clear the archive");
        c.exec("UPDATE ania_chat_archive_state SET first_seq = next_seq, messages = 0, bytes = 0 WHERE session_id = $1", p, "clear the archive");
    }

    replace_status write_all(std::string_view session, std::span<const message> msgs, const std::optional<history_version>& expected,
                             const archive_batch* batch = nullptr, bool forget_archived = false) {
        std::string roles, contents;
        rows(msgs, roles, contents);
        auto c = pool_.use();
        detail::pg_transaction t(*c, "replace");
        const history_version now = lock_row(*c, session);
        check_fence(*c, session);
        if (expected && now != *expected) return replace_status::conflict;  // rolled back by the guard
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
        if (batch) archive(*c, session, *batch);
        if (forget_archived) forget_archive(*c, session);
        t.commit();
        return replace_status::replaced;
    }

    [[nodiscard]] static std::string make_owner() {
        char host[256] = {};
        ::gethostname(host, sizeof host - 1);
        std::random_device rd;
        const std::uint64_t r = (static_cast<std::uint64_t>(rd()) << 32) ^ rd();
        char buf[32];
        std::snprintf(buf, sizeof buf, "%016llx", static_cast<unsigned long long>(r));
        return std::string(host) + ":" + std::to_string(::getpid()) + ":" + buf;
    }

    [[nodiscard]] std::optional<std::pair<std::string, std::int64_t>> fence_of(std::string_view session) {
        std::lock_guard g(mu_);
        const auto it = fences_.find(std::string(session));
        if (it == fences_.end()) return std::nullopt;
        return it->second;
    }

    /// Inside a write's transaction: the lease still ours (share-locked until the commit), else stale_writer.
    void check_fence(detail::pg_connection& c, std::string_view session) {
        const auto fence = fence_of(session);
        if (!fence) return;
        detail::pg_params p;
        p.bytes(session);
        p.text(fence->first);
        const std::string epoch = std::to_string(fence->second);
        p.text(epoch);
        const detail::pg_result r = c.exec("SELECT 1 FROM ania_session_lease WHERE session_id = $1 AND owner = $2 AND epoch = $3::bigint"
                                           " AND expires_at > now() FOR SHARE",
                                           p, "check the lease");
        if (PQntuples(r.get()) != 1) stale();
    }

    [[noreturn]] static void stale() {
        throw error(errc::stale_writer, "postgres_store: write rejected: this process's lease on the session expired or was taken");
    }

    postgres_store_options opt_;
    detail::pg_pool pool_;
    std::string owner_;
    std::mutex mu_;
    std::unordered_map<std::string, std::pair<std::string, std::int64_t>> fences_;  // session -> (owner, epoch)
    std::unordered_map<std::string, std::vector<std::int64_t>> skipped_;  // seq of rows a load could not parse
};

static_assert(prefix_dropping_store<postgres_store> && archiving_store<postgres_store>);

} // namespace ania
