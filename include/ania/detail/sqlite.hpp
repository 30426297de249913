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

#include <ania/detail/linkage.hpp>
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
[[nodiscard]] ANIA_INLINE bool sqlite_needs_reopen(int rc) noexcept;
[[nodiscard]] ANIA_INLINE bool sqlite_is_busy(int rc) noexcept;
/// The errc of a failed SQLite call: busy (retry may succeed), I/O (reopen, then retry), or a plain failure.
[[nodiscard]] ANIA_INLINE errc sqlite_errc(int rc) noexcept;

/// quick_check found damage (or the file is not a database): such a file is never written to.
struct sqlite_damaged : error {
    using error::error;
};

ANIA_INLINE void sqlite_exec(sqlite3* db, const std::string& sql);

/// `PRAGMA quick_check`: only a single row "ok" is healthy. Runs before anything writes to the file.
ANIA_INLINE void sqlite_check_health(sqlite3* db, const std::string& path);

ANIA_INLINE int sqlite_user_version(sqlite3* db);

/// Opens `path` as ania uses every SQLite file: health check first, then WAL, the synchronous mode, the
/// extra pragmas, and `schema` created in one BEGIN IMMEDIATE transaction. Throws sqlite_damaged (never write
/// to it), error(store_busy) (another connection holds it: try again later) or error (it cannot hold ania's
/// tables: not writable, read-only, ...).
ANIA_INLINE sqlite_db sqlite_open_checked(const std::string& path, const sqlite_file_options& opt, const char* schema);

/// sqlite_open_checked, tried `opt.open_attempts` times while the file is busy (back-off 100 ms, 200 ms, ...).
ANIA_INLINE sqlite_db sqlite_open_retrying(const std::string& path, const sqlite_file_options& opt, const char* schema);

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
    sqlite_connection(std::string path, const sqlite_file_options& opt, const char* schema, std::string owner);
    sqlite_connection(const sqlite_connection&) = delete;
    sqlite_connection& operator=(const sqlite_connection&) = delete;
    ~sqlite_connection();

    [[nodiscard]] bool enabled() const noexcept { return !disabled_; }
    [[nodiscard]] const std::string& path() const noexcept { return path_; }
    [[nodiscard]] const sqlite_file_options& options() const noexcept { return opt_; }
    [[nodiscard]] sqlite3* get() const noexcept { return db_.get(); }

    /// Opens (busy at construction) or reopens (after a connection-breaking error) when needed. False when
    /// the file is disabled. Other open failures throw; the next call tries again.
    bool ready();

    /// The cached statement for `sql` (prepared on first use), reset and unbound.
    sqlite3_stmt* statement(const char* sql);

    /// Throws the error for a failed call `what`. After an error that breaks the connection it is marked
    /// for reopening by the next ready() (not closed here: statements in use are still reset on the way out).
    [[noreturn]] void fail(int rc, std::string_view what);

    /// Steps a statement that returns no row, then resets it.
    void step_done(sqlite3_stmt* s, std::string_view what);

    void exec(const char* sql);

    /// Drops the statements and the connection (the next ready() reopens).
    void close() noexcept;

    /// Logs, closes for good: the file is never written to again by this connection.
    void disable(const std::string& why);

    static void bind_text(sqlite3_stmt* s, int i, std::string_view v) noexcept;
    /// Column `i` as bytes (NUL included; "" for NULL).
    [[nodiscard]] static std::string_view column(sqlite3_stmt* s, int i) noexcept;

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
    explicit sqlite_use(sqlite3_stmt* s) noexcept;
    sqlite_use(const sqlite_use&) = delete;
    sqlite_use& operator=(const sqlite_use&) = delete;
    ~sqlite_use();
    operator sqlite3_stmt*() const noexcept { return s_; }

private:
    sqlite3_stmt* s_;
};

/// BEGIN IMMEDIATE ... COMMIT, rolled back when left without commit() (an exception).
class sqlite_transaction {
public:
    /// BEGIN IMMEDIATE (a write: the lock taken now, so that no upgrade can deadlock), or a deferred BEGIN
    /// (`immediate` false: a read of one snapshot).
    sqlite_transaction(sqlite_connection& c, std::string_view what, bool immediate = true);
    sqlite_transaction(const sqlite_transaction&) = delete;
    sqlite_transaction& operator=(const sqlite_transaction&) = delete;
    void commit();
    /// Ends the transaction without writing anything (a failed precondition).
    void rollback() noexcept;
    ~sqlite_transaction();

private:
    sqlite_connection& c_;
    std::string_view what_;
    bool done_ = false;
};

} // namespace detail
} // namespace ania

#if ANIA_HEADER_ONLY
#include <ania/detail/sqlite-inl.hpp>
#endif
