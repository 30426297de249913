// ania/detail/postgres.hpp -- the one PostgreSQL layer (libpq) under postgres_store: a small connection pool
// that reconnects after the server went away, parameterised statements, a transaction guard, error mapping.
// Same shape as detail/sqlite.hpp. Not API.
// SPDX-License-Identifier: MIT
#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <libpq-fe.h>

#include <ania/error.hpp>
#include <ania/log.hpp>

namespace ania {

/// How ania reaches a PostgreSQL server.
struct postgres_options {
    /// A libpq connection string ("host=/run/postgresql dbname=bot", "postgresql://user@host/db?sslmode=require");
    /// empty: the PG* environment variables (PGHOST, PGDATABASE, PGUSER, PGPASSWORD, PGSSLMODE, ...).
    std::string dsn;
    std::size_t pool_size = 4;                       ///< connections kept open (more are opened under load, then closed)
    std::chrono::milliseconds statement_timeout{30'000};  ///< per statement; 0: the server's
    /// Behind a pooler that lends a server connection per transaction (PgBouncer's pool_mode = transaction) a
    /// session SET would stay on a server connection other clients then get, and later statements would run on
    /// connections without it. With this set ania keeps no session state: the timeout travels with each
    /// transaction as SET LOCAL (in the same round trip as BEGIN), and a statement outside a transaction is sent
    /// as BEGIN; SET LOCAL; statement; COMMIT in one round trip (a pipeline). Off: one SET at connect.
    bool transaction_pooling = false;
    log_sink log = stderr_log_sink();                ///< reconnects, skipped rows (never the password)
};

namespace detail {

/// `text` with the value of every password=... of `dsn` (and a URI's user:password@) masked.
[[nodiscard]] inline std::string pg_redact(std::string text, std::string_view dsn) {
    const auto mask = [&](std::string_view secret) {
        if (secret.size() < 3) return;
        for (std::size_t at = text.find(secret); at != std::string::npos; at = text.find(secret, at + 10))
            text.replace(at, secret.size(), "[redacted]");
    };
    for (std::size_t at = dsn.find("password="); at != std::string_view::npos; at = dsn.find("password=", at + 9)) {
        std::size_t b = at + 9, e = b;
        if (b < dsn.size() && dsn[b] == '\'') {
            e = dsn.find('\'', b + 1);
            ++b;
        } else {
            e = dsn.find_first_of(" &", b);
        }
        mask(dsn.substr(b, (e == std::string_view::npos ? dsn.size() : e) - b));
    }
    if (const auto scheme = dsn.find("://"); scheme != std::string_view::npos) {
        const auto at = dsn.find('@', scheme);
        const auto colon = dsn.find(':', scheme + 3);
        if (at != std::string_view::npos && colon != std::string_view::npos && colon < at) mask(dsn.substr(colon + 1, at - colon - 1));
    }
    return text;
}

struct pg_result_deleter {
    void operator()(PGresult* r) const noexcept { PQclear(r); }
};
using pg_result = std::unique_ptr<PGresult, pg_result_deleter>;

/// One statement's parameters: text or binary (a session id is bytes: it may hold NUL).
struct pg_params {
    std::vector<const char*> values;
    std::vector<int> lengths, formats;
    void text(const std::string& s) { add(s.data(), s.size(), 0); }
    void bytes(std::string_view s) { add(s.data(), s.size(), 1); }
    void add(const char* p, std::size_t n, int format) {
        values.push_back(p ? p : "");
        lengths.push_back(static_cast<int>(n));
        formats.push_back(format);
    }
};

/// A connection; `ok()` false after the server went away (the pool drops it and connects anew).
class pg_connection {
public:
    explicit pg_connection(const postgres_options& opt) : dsn_(opt.dsn) {
        const std::string timeout =
            opt.statement_timeout.count() > 0 ? "statement_timeout = " + std::to_string(opt.statement_timeout.count()) : "";
        if (!timeout.empty() && opt.transaction_pooling) local_ = "SET LOCAL " + timeout;
        conn_ = PQconnectdb(opt.dsn.c_str());
        if (!conn_ || PQstatus(conn_) != CONNECTION_OK) {
            const std::string why = conn_ ? PQerrorMessage(conn_) : "out of memory";
            if (conn_) PQfinish(conn_);
            conn_ = nullptr;
            throw error(errc::store_io, "postgres: cannot connect: " + pg_redact(trimmed(why), dsn_));
        }
        PQsetNoticeProcessor(conn_, [](void*, const char*) {}, nullptr);  // NOTICEs (CREATE IF NOT EXISTS) are not errors
        if (!timeout.empty() && !opt.transaction_pooling) exec_simple("SET " + timeout, "connection settings");
    }
    pg_connection(const pg_connection&) = delete;
    pg_connection& operator=(const pg_connection&) = delete;
    ~pg_connection() {
        if (conn_) PQfinish(conn_);
    }

    [[nodiscard]] bool ok() const noexcept { return conn_ && PQstatus(conn_) == CONNECTION_OK; }

    /// A statement without parameters (COMMIT, schema). Throws ania::error on failure.
    pg_result exec_simple(const std::string& sql, const char* what = "statement") {
        if (own_transaction_needed()) return in_own_transaction(sql.c_str(), nullptr, what);
        return check(pg_result(PQexec(conn_, sql.c_str())), what);
    }
    /// A parameterised statement; text results.
    pg_result exec(const char* sql, const pg_params& p, const char* what) {
        if (own_transaction_needed()) return in_own_transaction(sql, &p, what);
        return check(pg_result(PQexecParams(conn_, sql, static_cast<int>(p.values.size()), nullptr, p.values.data(),
                                            p.lengths.data(), p.formats.data(), 0)),
                     what);
    }
    /// BEGIN, with the settings of a transaction-pooled connection in the same round trip.
    void begin(const char* what) {
        const std::string sql = local_.empty() ? std::string("BEGIN") : "BEGIN; " + local_;
        check(pg_result(PQexec(conn_, sql.c_str())), what);
    }

private:
    [[nodiscard]] static std::string trimmed(std::string s) {
        while (!s.empty() && (s.back() == '\n' || s.back() == ' ')) s.pop_back();
        return s;
    }
    /// Transaction pooling with a timeout, and no transaction open: the statement needs one of its own.
    [[nodiscard]] bool own_transaction_needed() const noexcept {
        return !local_.empty() && conn_ && PQtransactionStatus(conn_) == PQTRANS_IDLE;
    }

    /// BEGIN; SET LOCAL ...; `sql`; COMMIT as one pipeline (one round trip); the statement's result.
    pg_result in_own_transaction(const char* sql, const pg_params* p, const char* what) {
        if (!PQenterPipelineMode(conn_)) return check(pg_result(), what);
        const auto send = [&](const char* q, const pg_params* args) {
            return PQsendQueryParams(conn_, q, args ? static_cast<int>(args->values.size()) : 0, nullptr,
                                     args ? args->values.data() : nullptr, args ? args->lengths.data() : nullptr,
                                     args ? args->formats.data() : nullptr, 0) == 1;
        };
        const bool sent = send("BEGIN", nullptr) && send(local_.c_str(), nullptr) && send(sql, p) && send("COMMIT", nullptr) &&
                          PQpipelineSync(conn_) == 1;
        pg_result mine, failed;
        for (int q = 0; sent && q < 4; ++q)
            while (PGresult* raw = PQgetResult(conn_)) {
                pg_result r(raw);
                const ExecStatusType st = PQresultStatus(raw);
                if (st == PGRES_FATAL_ERROR && !failed) failed = std::move(r);
                else if (q == 2 && (st == PGRES_COMMAND_OK || st == PGRES_TUPLES_OK)) mine = std::move(r);
            }
        if (sent) pg_result(PQgetResult(conn_));  // PGRES_PIPELINE_SYNC
        PQexitPipelineMode(conn_);
        // A failed statement leaves the explicit BEGIN's block open and aborted (COMMIT was skipped).
        if (const auto ts = PQtransactionStatus(conn_); ts == PQTRANS_INERROR || ts == PQTRANS_INTRANS) pg_result(PQexec(conn_, "ROLLBACK"));
        if (failed || !mine) return check(std::move(failed), what);  // throws
        return mine;
    }

    pg_result check(pg_result r, const char* what) {
        const ExecStatusType st = r ? PQresultStatus(r.get()) : PGRES_FATAL_ERROR;
        if (st == PGRES_COMMAND_OK || st == PGRES_TUPLES_OK) return r;
        std::string why = r ? PQresultErrorMessage(r.get()) : PQerrorMessage(conn_);
        const char* state = r ? PQresultErrorField(r.get(), PG_DIAG_SQLSTATE) : nullptr;
        const std::string sqlstate = state ? state : "";
        // Connection lost, admin shutdown, cannot connect now (class 08, 57P0x): transient; the rest is not.
        const bool transient = !ok() || sqlstate.rfind("08", 0) == 0 || sqlstate.rfind("57P", 0) == 0 || sqlstate == "40001" ||
                               sqlstate == "40P01";
        throw error(transient ? errc::store_io : errc::store_error,
                    std::string("postgres: ") + what + " failed" + (sqlstate.empty() ? "" : " (" + sqlstate + ")") + ": " +
                        pg_redact(trimmed(why), dsn_));
    }

    PGconn* conn_ = nullptr;
    std::string dsn_;
    std::string local_;  // "SET LOCAL statement_timeout = N" with transaction pooling and a timeout, else empty
};

/// A few connections shared by threads: `use()` lends one for a call; a connection that lost its server is
/// dropped when it comes back, so the next call connects anew (the call in flight failed with store_io).
class pg_pool {
public:
    explicit pg_pool(postgres_options opt) : opt_(std::move(opt)) {}

    class lease {
    public:
        lease(pg_pool& p, std::unique_ptr<pg_connection> c) : pool_(p), c_(std::move(c)) {}
        lease(const lease&) = delete;
        lease& operator=(const lease&) = delete;
        ~lease() { pool_.give_back(std::move(c_)); }
        pg_connection* operator->() const noexcept { return c_.get(); }
        pg_connection& operator*() const noexcept { return *c_; }

    private:
        pg_pool& pool_;
        std::unique_ptr<pg_connection> c_;
    };

    [[nodiscard]] lease use() {
        {
            std::lock_guard l(mu_);
            while (!idle_.empty()) {
                auto c = std::move(idle_.back());
                idle_.pop_back();
                if (c->ok()) return {*this, std::move(c)};
            }
        }
        return {*this, std::make_unique<pg_connection>(opt_)};
    }
    [[nodiscard]] const postgres_options& options() const noexcept { return opt_; }

private:
    void give_back(std::unique_ptr<pg_connection> c) {
        if (!c || !c->ok()) return;  // a broken connection is not kept
        std::lock_guard l(mu_);
        if (idle_.size() < opt_.pool_size) idle_.push_back(std::move(c));
    }

    postgres_options opt_;
    std::mutex mu_;
    std::vector<std::unique_ptr<pg_connection>> idle_;
};

/// BEGIN on construction, ROLLBACK unless commit() was called.
class pg_transaction {
public:
    pg_transaction(pg_connection& c, const char* what) : c_(c) { c_.begin(what); }
    pg_transaction(const pg_transaction&) = delete;
    pg_transaction& operator=(const pg_transaction&) = delete;
    ~pg_transaction() {
        if (!done_ && c_.ok()) {
            try {
                c_.exec_simple("ROLLBACK");
            } catch (...) {  // the connection is broken: the pool drops it, the server rolls back
            }
        }
    }
    void commit() {
        c_.exec_simple("COMMIT", "commit");
        done_ = true;
    }

private:
    pg_connection& c_;
    bool done_ = false;
};

/// A PostgreSQL array literal of texts: {"a","b\"c"} (every element quoted, " and \ escaped).
inline void append_pg_text_array(std::string& out, std::span<const std::string> items) {
    out.push_back('{');
    for (std::size_t i = 0; i < items.size(); ++i) {
        if (i) out.push_back(',');
        out.push_back('"');
        for (const char c : items[i]) {
            if (c == '"' || c == '\\') out.push_back('\\');
            out.push_back(c);
        }
        out.push_back('"');
    }
    out.push_back('}');
}

} // namespace detail
} // namespace ania
