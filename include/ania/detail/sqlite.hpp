// ania/detail/sqlite.hpp -- the one SQLite layer under sqlite_store and memory::sqlite_backend: how a file is
// opened, checked, kept open and reopened, its statements cached, its transactions guarded, its errors mapped.
// SPDX-License-Identifier: MIT
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <thread>
#include <utility>
#include <vector>

#include <sqlite3.h>

#include <ania/error.hpp>
#include <ania/log.hpp>

namespace ania {

/// Durability of a commit: FULL survives power loss; NORMAL (in WAL mode) may lose the last commits on power
/// loss but never corrupts, and is several times faster (no fsync per transaction).
enum class sqlite_sync : std::uint8_t { normal, full };

/// How ania opens an SQLite file (sqlite_store_options and memory::sqlite_backend_options start with these).
struct sqlite_file_options {
    sqlite_sync synchronous = sqlite_sync::full;
    std::chrono::milliseconds busy_timeout{5000};  ///< how long a writer waits for another process's lock
    std::string vfs;                               ///< SQLite VFS name; empty = the default
    std::vector<std::string> pragmas;              ///< run at every open, e.g. "max_page_count=1000"
    /// Opening a file that another connection holds locked is tried this many times (each waiting up to
    /// busy_timeout, with back-off between): busy is not unhealthy. If it is still busy, the file stays
    /// enabled and is opened on first use.
    int open_attempts = 3;
    log_sink log = stderr_log_sink();  ///< disabled persistence, reopen, skipped rows
};

namespace detail {

struct sqlite_closer {
    void operator()(sqlite3* db) const noexcept { sqlite3_close_v2(db); }
};
struct sqlite_finalizer {
    void operator()(sqlite3_stmt* s) const noexcept { sqlite3_finalize(s); }
};
using sqlite_db = std::unique_ptr<sqlite3, sqlite_closer>;
using sqlite_stmt = std::unique_ptr<sqlite3_stmt, sqlite_finalizer>;

/// Written to PRAGMA user_version of a new file; bumped when a table of ania changes shape.
inline constexpr int sqlite_schema_version = 1;

/// Errors after which a WAL connection keeps failing until it is reopened.
[[nodiscard]] inline bool sqlite_needs_reopen(int rc) noexcept {
    const int primary = rc & 0xFF;
    return primary == SQLITE_IOERR || primary == SQLITE_FULL || primary == SQLITE_CORRUPT || primary == SQLITE_NOTADB;
}
[[nodiscard]] inline bool sqlite_is_busy(int rc) noexcept {
    const int primary = rc & 0xFF;
    return primary == SQLITE_BUSY || primary == SQLITE_LOCKED;
}
/// The errc of a failed SQLite call: busy (retry may succeed), I/O (reopen, then retry), or a plain failure.
[[nodiscard]] inline errc sqlite_errc(int rc) noexcept {
    if (sqlite_is_busy(rc)) return errc::store_busy;
    if (sqlite_needs_reopen(rc)) return errc::store_io;
    return errc::store_error;
}

/// quick_check found damage (or the file is not a database): such a file is never written to.
struct sqlite_damaged : error {
    using error::error;
};

inline void sqlite_exec(sqlite3* db, const std::string& sql) {
    char* msg = nullptr;
    const int rc = sqlite3_exec(db, sql.c_str(), nullptr, nullptr, &msg);
    if (rc != SQLITE_OK) {
        std::string text = msg ? msg : sqlite3_errstr(rc);
        sqlite3_free(msg);
        throw error(sqlite_errc(rc), sql.substr(0, 40) + ": " + text);
    }
}

/// `PRAGMA quick_check`: only a single row "ok" is healthy. Runs before anything writes to the file.
inline void sqlite_check_health(sqlite3* db, const std::string& path) {
    sqlite3_stmt* raw = nullptr;
    int rc = sqlite3_prepare_v2(db, "PRAGMA quick_check", -1, &raw, nullptr);
    sqlite_stmt s(raw);
    if (sqlite_is_busy(rc)) throw error(errc::store_busy, "quick_check of " + path + ": " + sqlite3_errmsg(db));
    if (rc != SQLITE_OK) throw sqlite_damaged(errc::store_error, "quick_check of " + path + " failed: " + sqlite3_errmsg(db));
    std::string first;
    int rows = 0;
    while ((rc = sqlite3_step(raw)) == SQLITE_ROW) {
        if (rows++ == 0) {
            const auto* t = reinterpret_cast<const char*>(sqlite3_column_text(raw, 0));
            first = t ? t : "";
        }
    }
    if (sqlite_is_busy(rc)) throw error(errc::store_busy, "quick_check of " + path + ": " + sqlite3_errmsg(db));
    if (rc != SQLITE_DONE) throw sqlite_damaged(errc::store_error, "quick_check of " + path + " failed: " + sqlite3_errmsg(db));
    if (rows != 1 || first != "ok") throw sqlite_damaged(errc::store_error, "quick_check of " + path + " reports damage: " + first);
}

inline int sqlite_user_version(sqlite3* db) {
    sqlite3_stmt* raw = nullptr;
    sqlite3_prepare_v2(db, "PRAGMA user_version", -1, &raw, nullptr);
    sqlite_stmt s(raw);
    return raw && sqlite3_step(raw) == SQLITE_ROW ? sqlite3_column_int(raw, 0) : 0;
}

/// Opens `path` as ania uses every SQLite file: health check first, then WAL, the synchronous mode, the
/// extra pragmas, and `schema` created in one BEGIN IMMEDIATE transaction. Throws sqlite_damaged (never write
/// to it), error(store_busy) (another connection holds it: try again later) or error (it cannot hold ania's
/// tables: not writable, read-only, ...).
inline sqlite_db sqlite_open_checked(const std::string& path, const sqlite_file_options& opt, const char* schema) {
    sqlite3* raw = nullptr;
    const int rc = sqlite3_open_v2(path.c_str(), &raw, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_NOMUTEX,
                                   opt.vfs.empty() ? nullptr : opt.vfs.c_str());
    sqlite_db db(raw);
    if (rc != SQLITE_OK)
        throw error(errc::store_error, "cannot open " + path + ": " + (raw ? sqlite3_errmsg(raw) : sqlite3_errstr(rc)));
    // SQLite opens a write-protected file read-only without saying so: every later write would fail.
    if (sqlite3_db_readonly(raw, "main") == 1)
        throw error(errc::store_error, path + " is read-only (file permissions): it cannot be written");
    sqlite3_extended_result_codes(raw, 1);
    sqlite3_busy_timeout(raw, static_cast<int>(opt.busy_timeout.count()));
    sqlite_check_health(raw, path);
    sqlite_exec(raw, "PRAGMA journal_mode=WAL");
    sqlite_exec(raw, opt.synchronous == sqlite_sync::full ? "PRAGMA synchronous=FULL" : "PRAGMA synchronous=NORMAL");
    for (const std::string& p : opt.pragmas) sqlite_exec(raw, "PRAGMA " + p);
    sqlite_exec(raw, "BEGIN IMMEDIATE");
    try {
        sqlite_exec(raw, schema);
        if (sqlite_user_version(raw) == 0) sqlite_exec(raw, "PRAGMA user_version=" + std::to_string(sqlite_schema_version));
        sqlite_exec(raw, "COMMIT");
    } catch (...) {
        sqlite3_exec(raw, "ROLLBACK", nullptr, nullptr, nullptr);
        throw;
    }
    return db;
}

/// sqlite_open_checked, tried `opt.open_attempts` times while the file is busy (back-off 100 ms, 200 ms, ...).
inline sqlite_db sqlite_open_retrying(const std::string& path, const sqlite_file_options& opt, const char* schema) {
    for (int attempt = 1;; ++attempt) {
        try {
            return sqlite_open_checked(path, opt, schema);
        } catch (const error& e) {
            if (e.code() != errc::store_busy || attempt >= opt.open_attempts) throw;
        }
        std::this_thread::sleep_for(std::chrono::milliseconds(100) * (1 << std::min(attempt - 1, 5)));
    }
}

/// One connection to one of ania's files, with everything its owner needs, for use under the owner's lock
/// (it is not thread-safe itself):
/// - open at construction (retried while busy); a file that is damaged, read-only or cannot hold the schema
///   disables it (logged once: `enabled()` is false and the file is never written); a file still busy is
///   opened on first use (`ready()`);
/// - after an I/O, disk-full or corruption error the next `ready()` closes and reopens the connection (a
///   file found damaged then is disabled as at the first open);
/// - prepared statements cached by their SQL (a string literal's address), dropped with the connection;
/// - errors thrown as ania::error with the errc of sqlite_errc and a text naming the owner and the operation.
class sqlite_connection {
public:
    /// `owner` prefixes every log line and error text ("sqlite_store", "memory sqlite_backend").
    sqlite_connection(std::string path, const sqlite_file_options& opt, const char* schema, std::string owner)
        : path_(std::move(path)), opt_(opt), schema_(schema), owner_(std::move(owner)) {
        try {
            db_ = sqlite_open_retrying(path_, opt_, schema_);
            opened_ = true;
        } catch (const error& e) {
            if (e.code() == errc::store_busy)
                log_to(opt_.log, log_level::warn, owner_ + ": " + path_ + " is busy (another connection holds its lock); "
                                                  "it will be opened on first use: " + e.what());
            else
                disable(e.what());
        }
    }
    sqlite_connection(const sqlite_connection&) = delete;
    sqlite_connection& operator=(const sqlite_connection&) = delete;
    ~sqlite_connection() { close(); }

    [[nodiscard]] bool enabled() const noexcept { return !disabled_; }
    [[nodiscard]] const std::string& path() const noexcept { return path_; }
    [[nodiscard]] const sqlite_file_options& options() const noexcept { return opt_; }
    [[nodiscard]] sqlite3* get() const noexcept { return db_.get(); }

    /// Opens (busy at construction) or reopens (after a connection-breaking error) when needed. False when
    /// the file is disabled. Other open failures throw; the next call tries again.
    bool ready() {
        if (disabled_) return false;
        if (db_ && !broken_) return true;
        close();
        broken_ = false;
        const bool first = !opened_;
        try {
            db_ = sqlite_open_checked(path_, opt_, schema_);
        } catch (const sqlite_damaged& e) {
            disable(e.what());
            return false;
        } catch (const error& e) {
            // Never opened (busy at construction) and now found unable to hold the tables: as at the first
            // open. Busy again, or a reopen that failed: the caller sees it, the next call retries.
            if (first && e.code() != errc::store_busy) {
                disable(e.what());
                return false;
            }
            throw;
        }
        opened_ = true;
        log_to(opt_.log, log_level::info, owner_ + ": " + (first ? "opened " : "reopened ") + path_);
        return true;
    }

    /// The cached statement for `sql` (prepared on first use), reset and unbound.
    sqlite3_stmt* statement(const char* sql) {
        for (auto& [key, st] : cache_)
            if (key == sql) return st.get();
        sqlite3_stmt* raw = nullptr;
        const int rc = sqlite3_prepare_v3(db_.get(), sql, -1, SQLITE_PREPARE_PERSISTENT, &raw, nullptr);
        if (rc != SQLITE_OK) fail(rc, "prepare");
        cache_.emplace_back(sql, sqlite_stmt(raw));
        return raw;
    }

    /// Throws the error for a failed call `what`. After an error that breaks the connection it is marked
    /// for reopening by the next ready() (not closed here: statements in use are still reset on the way out).
    [[noreturn]] void fail(int rc, std::string_view what) {
        std::string text = owner_ + ": " + std::string(what) + " failed: " + (db_ ? sqlite3_errmsg(db_.get()) : "") + " (" +
                           sqlite3_errstr(rc) + ")";
        if (sqlite_needs_reopen(rc)) broken_ = true;
        throw error(sqlite_errc(rc), text);
    }

    /// Steps a statement that returns no row, then resets it.
    void step_done(sqlite3_stmt* s, std::string_view what) {
        const int rc = sqlite3_step(s);
        sqlite3_reset(s);
        sqlite3_clear_bindings(s);
        if (rc != SQLITE_DONE) fail(rc, what);
    }

    void exec(const char* sql) {
        const int rc = sqlite3_exec(db_.get(), sql, nullptr, nullptr, nullptr);
        if (rc != SQLITE_OK) fail(rc, sql);
    }

    /// Drops the statements and the connection (the next ready() reopens).
    void close() noexcept {
        cache_.clear();
        db_.reset();  // after the statements
    }

    /// Logs, closes for good: the file is never written to again by this connection.
    void disable(const std::string& why) {
        disabled_ = true;
        close();
        log_to(opt_.log, log_level::error, owner_ + ": DISABLED for " + path_ + " (the file is left untouched): " + why);
    }

    static void bind_text(sqlite3_stmt* s, int i, std::string_view v) noexcept {
        sqlite3_bind_text64(s, i, v.data(), v.size(), SQLITE_STATIC, SQLITE_UTF8);
    }
    /// Column `i` as bytes (NUL included; "" for NULL).
    [[nodiscard]] static std::string_view column(sqlite3_stmt* s, int i) noexcept {
        const auto* p = static_cast<const char*>(sqlite3_column_blob(s, i));
        return p ? std::string_view(p, static_cast<std::size_t>(sqlite3_column_bytes(s, i))) : std::string_view();
    }

private:
    std::string path_;
    sqlite_file_options opt_;
    const char* schema_;
    std::string owner_;
    bool disabled_ = false;
    bool opened_ = false;  // the file was opened once (a later open failure is a reopen)
    bool broken_ = false;  // an error broke the connection: ready() reopens it
    std::vector<std::pair<const char*, sqlite_stmt>> cache_;  // before db_: destroyed first
    sqlite_db db_;
};

/// A statement in use: reset and unbound when it goes out of scope, so that no cursor stays open past an
/// exception (an open read cursor would keep a WAL snapshot and block checkpoints).
class sqlite_use {
public:
    explicit sqlite_use(sqlite3_stmt* s) noexcept : s_(s) {}
    sqlite_use(const sqlite_use&) = delete;
    sqlite_use& operator=(const sqlite_use&) = delete;
    ~sqlite_use() {
        sqlite3_reset(s_);
        sqlite3_clear_bindings(s_);
    }
    operator sqlite3_stmt*() const noexcept { return s_; }

private:
    sqlite3_stmt* s_;
};

/// BEGIN IMMEDIATE ... COMMIT, rolled back when left without commit() (an exception).
class sqlite_transaction {
public:
    sqlite_transaction(sqlite_connection& c, std::string_view what) : c_(c), what_(what) {
        const int rc = sqlite3_exec(c_.get(), "BEGIN IMMEDIATE", nullptr, nullptr, nullptr);
        if (rc != SQLITE_OK) c_.fail(rc, what_);
    }
    sqlite_transaction(const sqlite_transaction&) = delete;
    sqlite_transaction& operator=(const sqlite_transaction&) = delete;
    void commit() {
        const int rc = sqlite3_exec(c_.get(), "COMMIT", nullptr, nullptr, nullptr);
        if (rc != SQLITE_OK) c_.fail(rc, what_);
        done_ = true;
    }
    /// Ends the transaction without writing anything (a failed precondition).
    void rollback() noexcept {
        if (c_.get() && !sqlite3_get_autocommit(c_.get())) sqlite3_exec(c_.get(), "ROLLBACK", nullptr, nullptr, nullptr);
        done_ = true;
    }
    ~sqlite_transaction() {
        if (!done_) rollback();
    }

private:
    sqlite_connection& c_;
    std::string_view what_;
    bool done_ = false;
};

} // namespace detail
} // namespace ania
