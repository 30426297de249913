// ania/store/sqlite_store.hpp -- history in SQLite rows (SPEC §2): one row per session, one per message.
// SPDX-License-Identifier: MIT
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <memory>
#include <mutex>
#include <span>
#include <string>
#include <string_view>
#include <thread>
#include <utility>
#include <set>
#include <vector>

#include <sqlite3.h>

#include <ania/concepts.hpp>
#include <ania/detail/timestamp.hpp>
#include <ania/error.hpp>
#include <ania/json.hpp>
#include <ania/log.hpp>
#include <ania/message.hpp>

namespace ania {

/// Durability of a commit: FULL survives power loss; NORMAL (in WAL mode) may lose the last commits on power
/// loss but never corrupts, and is several times faster (no fsync per transaction).
enum class sqlite_sync : std::uint8_t { normal, full };

struct sqlite_store_options {
    sqlite_sync synchronous = sqlite_sync::full;
    std::chrono::milliseconds busy_timeout{5000};  ///< how long a writer waits for another process's lock
    log_sink log = stderr_log_sink();              ///< skipped rows, disabled persistence, reopen
    parse_limits limits{};                         ///< applied to every stored row when loading
    write_options write{};                         ///< how messages are serialised into `content`
    std::string vfs;                               ///< SQLite VFS name; empty = the default
    std::vector<std::string> pragmas;              ///< run at every open, e.g. "max_page_count=1000"
    /// Opening a file that another connection holds locked is tried this many times (each waiting up to
    /// busy_timeout, with back-off between): busy is not unhealthy. If it is still busy, the store stays
    /// enabled and opens on first use.
    int open_attempts = 3;
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

/// Errors after which a WAL connection keeps failing until it is reopened.
[[nodiscard]] inline bool sqlite_needs_reopen(int rc) noexcept {
    const int primary = rc & 0xFF;
    return primary == SQLITE_IOERR || primary == SQLITE_FULL || primary == SQLITE_CORRUPT || primary == SQLITE_NOTADB;
}


/// Written to PRAGMA user_version of a new file; bumped when a table of ania changes shape.
inline constexpr int sqlite_schema_version = 1;

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
inline sqlite_db sqlite_open_checked(const std::string& path, const sqlite_store_options& opt, const char* schema) {
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
inline sqlite_db sqlite_open_retrying(const std::string& path, const sqlite_store_options& opt, const char* schema) {
    for (int attempt = 1;; ++attempt) {
        try {
            return sqlite_open_checked(path, opt, schema);
        } catch (const error& e) {
            if (e.code() != errc::store_busy || attempt >= opt.open_attempts) throw;
        }
        std::this_thread::sleep_for(std::chrono::milliseconds(100) * (1 << std::min(attempt - 1, 5)));
    }
}


inline constexpr const char* sqlite_history_schema =
    "CREATE TABLE IF NOT EXISTS ania_chat_session("
    " session_id TEXT PRIMARY KEY,"
    " msg_count INTEGER NOT NULL DEFAULT 0,"
    " created_at TEXT NOT NULL,"
    " updated_at TEXT NOT NULL);"
    "CREATE TABLE IF NOT EXISTS ania_chat_message("
    " session_id TEXT NOT NULL,"
    " seq INTEGER NOT NULL,"
    " role TEXT NOT NULL,"
    " content TEXT NOT NULL,"
    " created_at TEXT NOT NULL,"
    " PRIMARY KEY(session_id, seq));"
    // Rows that a load skipped because they did not parse (another tool or version wrote them) are moved
    // here instead of being deleted when the history they sat in is replaced or its prefix dropped.
    "CREATE TABLE IF NOT EXISTS ania_chat_quarantine("
    " session_id TEXT NOT NULL,"
    " seq INTEGER NOT NULL,"
    " content TEXT NOT NULL,"
    " created_at TEXT NOT NULL,"
    " quarantined_at TEXT NOT NULL,"
    " reason TEXT NOT NULL);";

} // namespace detail

/// A history_store on one SQLite file (WAL). Safe to share between threads (one connection behind a
/// mutex) and between processes (every write is one BEGIN IMMEDIATE transaction; seq comes from msg_count).
///
/// At open the file is checked with `PRAGMA quick_check`; if it is unhealthy, read-only, or the tables cannot
/// be created, persistence is disabled with an error log line: `enabled()` is false, loads are empty, writes
/// are dropped, and the file is never written to. A file that is merely busy (another process holds its
/// lock past busy_timeout) is not unhealthy: the open is retried (options().open_attempts), and if it is still
/// busy the store stays enabled and opens on first use. Operation failures throw ania::error: store_busy
/// and store_io are transient (after an I/O, disk-full or corruption error the connection is closed and
/// reopened by the next call), store_error is not.
///
/// A stored row that does not parse (written by another tool or version) is skipped by load and logged; it
/// is never lost silently: when a replace or drop_front would delete it, it is first moved to
/// `ania_chat_quarantine` (with the reason) and a warning is logged.
class sqlite_store {
public:
    explicit sqlite_store(std::string path, sqlite_store_options opt = {}) : path_(std::move(path)), opt_(std::move(opt)) {
        std::lock_guard lock(mutex_);
        try {
            db_ = detail::sqlite_open_retrying(path_, opt_, detail::sqlite_history_schema);
            opened_ = true;
        } catch (const error& e) {
            if (e.code() == errc::store_busy)
                log_to(opt_.log, log_level::warn, "sqlite_store: " + path_ + " is busy (another connection holds its lock); "
                                                  "it will be opened on first use: " + e.what());
            else
                disable_locked(e.what());
        }
    }

    sqlite_store(const sqlite_store&) = delete;
    sqlite_store& operator=(const sqlite_store&) = delete;

    /// False when persistence was disabled at open (see the class comment).
    [[nodiscard]] bool enabled() const {
        std::lock_guard lock(mutex_);
        return !disabled_;
    }
    [[nodiscard]] const std::string& path() const noexcept { return path_; }

    /// The stored messages in seq order. Rows that do not parse as a message are skipped and logged;
    /// a read error (I/O, corruption) throws rather than returning a prefix.
    [[nodiscard]] std::vector<message> load(std::string_view session) {
        std::vector<std::string> rows;
        {
            std::lock_guard lock(mutex_);
            if (!ready_locked()) return {};
            sqlite3_stmt* s = stmt_locked(load_, "SELECT seq, content FROM ania_chat_message WHERE session_id = ?1 ORDER BY seq");
            bind_text(s, 1, session);
            int rc;
            while ((rc = sqlite3_step(s)) == SQLITE_ROW) {
                const auto* p = static_cast<const char*>(sqlite3_column_blob(s, 1));
                rows.emplace_back(p ? p : "", static_cast<std::size_t>(sqlite3_column_bytes(s, 1)));
            }
            sqlite3_reset(s);  // collect, release the cursor, then parse
            if (rc != SQLITE_DONE) fail_locked(rc, "load");
        }
        std::vector<message> out;
        out.reserve(rows.size());
        std::size_t skipped = 0;
        for (std::size_t i = 0; i < rows.size(); ++i) {
            try {
                out.push_back(parse_message(rows[i], opt_.limits));
            } catch (const std::exception& e) {
                ++skipped;
                log_to(opt_.log, log_level::warn, "sqlite_store: skipped stored message " + std::to_string(i) +
                                                      " of a session: " + e.what());
            }
        }
        if (skipped) {  // a later replace or drop_front must not delete them silently
            std::lock_guard lock(mutex_);
            with_skipped_rows_.emplace(session);
        }
        return out;
    }

    /// Appends in one transaction: all messages are stored or none.
    void append(std::string_view session, std::span<const message> msgs) {
        if (msgs.empty()) return;
        const std::vector<std::string> rows = serialise(msgs);
        std::lock_guard lock(mutex_);
        if (!ready_locked()) return;
        write_locked("append", [&] {
            const std::string now = detail::utc_now();
            std::int64_t seq = ensure_session_locked(session, now);
            for (std::size_t i = 0; i < rows.size(); ++i) insert_locked(session, seq++, msgs[i].role, rows[i], now);
            set_count_locked(session, seq, now);
        });
    }

    /// Overwrites the session's history, renumbering seq from 0, in one transaction.
    void replace(std::string_view session, std::span<const message> msgs) {
        const std::vector<std::string> rows = serialise(msgs);
        std::lock_guard lock(mutex_);
        if (!ready_locked()) return;
        write_locked("replace", [&] {
            const std::string now = detail::utc_now();
            ensure_session_locked(session, now);
            quarantine_locked(session, std::numeric_limits<std::int64_t>::max(), now);
            exec_bound_locked(del_msgs_, "DELETE FROM ania_chat_message WHERE session_id = ?1", session);
            for (std::size_t i = 0; i < rows.size(); ++i)
                insert_locked(session, static_cast<std::int64_t>(i), msgs[i].role, rows[i], now);
            set_count_locked(session, static_cast<std::int64_t>(rows.size()), now);
        });
        // Every old row is gone (the unparseable ones to quarantine): none is left to look for. (drop_front
        // may leave some behind, so it keeps the mark.)
        forget_skipped_locked(session);
    }

    /// Deletes the session from both tables (an explicit forget: unparseable rows go too). A missing session
    /// is a no-op.
    void clear(std::string_view session) {
        std::lock_guard lock(mutex_);
        if (!ready_locked()) return;
        write_locked("clear", [&] {
            exec_bound_locked(del_msgs_, "DELETE FROM ania_chat_message WHERE session_id = ?1", session);
            exec_bound_locked(del_session_, "DELETE FROM ania_chat_session WHERE session_id = ?1", session);
        });
        forget_skipped_locked(session);
    }

    /// Drops the first k messages and renumbers the rest from 0, without rewriting their content.
    void drop_front(std::string_view session, std::size_t k) {
        if (k == 0) return;
        std::lock_guard lock(mutex_);
        if (!ready_locked()) return;
        write_locked("drop_front", [&] {
            const std::string now = detail::utc_now();
            const std::int64_t n = ensure_session_locked(session, now);
            const auto kk = static_cast<std::int64_t>(std::min<std::size_t>(k, static_cast<std::size_t>(n)));
            quarantine_locked(session, kk, now);
            sqlite3_stmt* d = stmt_locked(drop_, "DELETE FROM ania_chat_message WHERE session_id = ?1 AND seq < ?2");
            bind_text(d, 1, session);
            sqlite3_bind_int64(d, 2, kk);
            step_done_locked(d, "drop_front");
            // An UPDATE may visit rows in any order, and the primary key must hold after every row. When no
            // more rows remain than were dropped (halving), every new seq lies in the freed range [0, kk): one
            // pass. Otherwise two passes through negative numbers.
            if (n - kk <= kk) {
                sqlite3_stmt* u = stmt_locked(shift_, "UPDATE ania_chat_message SET seq = seq - ?2 WHERE session_id = ?1");
                bind_text(u, 1, session);
                sqlite3_bind_int64(u, 2, kk);
                step_done_locked(u, "drop_front");
            } else {
                sqlite3_stmt* u1 = stmt_locked(shift1_, "UPDATE ania_chat_message SET seq = -1 - (seq - ?2) WHERE session_id = ?1");
                bind_text(u1, 1, session);
                sqlite3_bind_int64(u1, 2, kk);
                step_done_locked(u1, "drop_front");
                exec_bound_locked(shift2_, "UPDATE ania_chat_message SET seq = -1 - seq WHERE session_id = ?1", session);
            }
            set_count_locked(session, n - kk, now);
        });
    }

private:
    std::vector<std::string> serialise(std::span<const message> msgs) const {
        std::vector<std::string> rows;
        rows.reserve(msgs.size());
        for (const message& m : msgs) rows.push_back(dump(m, opt_.write));  // outside the lock and the transaction
        return rows;
    }

    void open_locked() {
        db_ = detail::sqlite_open_checked(path_, opt_, detail::sqlite_history_schema);
        opened_ = true;
    }

    /// The session's rows hold nothing unparseable any more (replaced or cleared).
    void forget_skipped_locked(std::string_view session) {
        if (const auto it = with_skipped_rows_.find(session); it != with_skipped_rows_.end()) with_skipped_rows_.erase(it);
    }

    /// Before rows [0, below) of a session that a load found unparseable rows in are deleted: moves every
    /// such row of that range to ania_chat_quarantine (inside the caller's transaction) and logs it. Parsing
    /// runs only for sessions whose load skipped something.
    void quarantine_locked(std::string_view session, std::int64_t below, const std::string& now) {
        const auto flagged = with_skipped_rows_.find(session);
        if (flagged == with_skipped_rows_.end()) return;
        sqlite3_stmt* s = stmt_locked(scan_, "SELECT seq, content, created_at FROM ania_chat_message WHERE session_id = ?1 AND seq < ?2 ORDER BY seq");
        bind_text(s, 1, session);
        sqlite3_bind_int64(s, 2, below);
        struct bad_row {
            std::int64_t seq;
            std::string content, created_at, reason;
        };
        std::vector<bad_row> bad;
        int rc;
        while ((rc = sqlite3_step(s)) == SQLITE_ROW) {
            const auto* p = static_cast<const char*>(sqlite3_column_blob(s, 1));
            std::string content(p ? p : "", static_cast<std::size_t>(sqlite3_column_bytes(s, 1)));
            try {
                (void)parse_message(content, opt_.limits);
            } catch (const std::exception& e) {
                const auto* t = reinterpret_cast<const char*>(sqlite3_column_text(s, 2));
                bad.push_back({sqlite3_column_int64(s, 0), std::move(content), t ? t : "", e.what()});
            }
        }
        sqlite3_reset(s);
        sqlite3_clear_bindings(s);
        if (rc != SQLITE_DONE) fail_locked(rc, "quarantine scan");
        for (const bad_row& b : bad) {
            sqlite3_stmt* q = stmt_locked(quarantine_, "INSERT INTO ania_chat_quarantine(session_id, seq, content, created_at, "
                                                       "quarantined_at, reason) VALUES(?1, ?2, ?3, ?4, ?5, ?6)");
            bind_text(q, 1, session);
            sqlite3_bind_int64(q, 2, b.seq);
            bind_text(q, 3, b.content);
            bind_text(q, 4, b.created_at);
            bind_text(q, 5, now);
            bind_text(q, 6, b.reason);
            step_done_locked(q, "quarantine");
        }
        if (!bad.empty())
            log_to(opt_.log, log_level::warn, "sqlite_store: " + std::to_string(bad.size()) + " unparseable stored message(s) of a "
                                              "session moved to ania_chat_quarantine instead of being deleted");
    }

    void disable_locked(const std::string& why) {
        disabled_ = true;
        close_locked();
        log_to(opt_.log, log_level::error,
               "sqlite_store: history persistence DISABLED for " + path_ + " (the file is left untouched): " + why);
    }

    void close_locked() {
        load_.reset(); select_count_.reset(); insert_session_.reset(); insert_msg_.reset(); update_count_.reset();
        del_msgs_.reset(); del_session_.reset(); drop_.reset(); shift_.reset(); shift1_.reset(); shift2_.reset();
        scan_.reset(); quarantine_.reset();
        db_.reset();  // after the statements
    }

    /// Reopens lazily after a connection-breaking error. False when persistence is disabled. A file found
    /// damaged at reopen disables persistence as at the first open; other open failures throw and the next
    /// call tries again.
    bool ready_locked() {
        if (disabled_) return false;
        if (!db_) {
            const bool first = !opened_;
            try {
                open_locked();
            } catch (const detail::sqlite_damaged& e) {
                disable_locked(e.what());
                return false;
            } catch (const error& e) {
                // Never opened (busy at construction) and now found unable to hold the tables: as at the
                // first open. Busy again, or a reopen that failed: the caller sees it, the next call retries.
                if (first && e.code() != errc::store_busy) {
                    disable_locked(e.what());
                    return false;
                }
                throw;
            }
            log_to(opt_.log, log_level::info, std::string("sqlite_store: ") + (first ? "opened " : "reopened ") + path_);
        }
        return true;
    }


    [[noreturn]] void fail_locked(int rc, const char* what) {
        std::string text = std::string("sqlite_store: ") + what + " failed: " + (db_ ? sqlite3_errmsg(db_.get()) : "") +
                           " (" + sqlite3_errstr(rc) + ")";
        if (detail::sqlite_needs_reopen(rc)) close_locked();
        throw error(detail::sqlite_errc(rc), text);
    }

    sqlite3_stmt* stmt_locked(detail::sqlite_stmt& slot, const char* sql) {
        if (!slot) {
            sqlite3_stmt* raw = nullptr;
            const int rc = sqlite3_prepare_v3(db_.get(), sql, -1, SQLITE_PREPARE_PERSISTENT, &raw, nullptr);
            if (rc != SQLITE_OK) fail_locked(rc, "prepare");
            slot.reset(raw);
        }
        return slot.get();
    }

    static void bind_text(sqlite3_stmt* s, int i, std::string_view v) {
        sqlite3_bind_text64(s, i, v.data(), v.size(), SQLITE_STATIC, SQLITE_UTF8);
    }

    void step_done_locked(sqlite3_stmt* s, const char* what) {
        const int rc = sqlite3_step(s);
        sqlite3_reset(s);
        sqlite3_clear_bindings(s);
        if (rc != SQLITE_DONE) fail_locked(rc, what);
    }

    void exec_bound_locked(detail::sqlite_stmt& slot, const char* sql, std::string_view session) {
        sqlite3_stmt* s = stmt_locked(slot, sql);
        bind_text(s, 1, session);
        step_done_locked(s, "write");
    }

    template <class F>
    void write_locked(const char* what, F&& body) {
        int rc = sqlite3_exec(db_.get(), "BEGIN IMMEDIATE", nullptr, nullptr, nullptr);
        if (rc != SQLITE_OK) fail_locked(rc, what);
        try {
            body();
            rc = sqlite3_exec(db_.get(), "COMMIT", nullptr, nullptr, nullptr);
            if (rc != SQLITE_OK) fail_locked(rc, what);
        } catch (...) {
            if (db_ && !sqlite3_get_autocommit(db_.get())) sqlite3_exec(db_.get(), "ROLLBACK", nullptr, nullptr, nullptr);
            throw;
        }
    }

    /// The session's msg_count, creating its row (count 0) when missing.
    std::int64_t ensure_session_locked(std::string_view session, const std::string& now) {
        sqlite3_stmt* s = stmt_locked(select_count_, "SELECT msg_count FROM ania_chat_session WHERE session_id = ?1");
        bind_text(s, 1, session);
        const int rc = sqlite3_step(s);
        std::int64_t n = rc == SQLITE_ROW ? sqlite3_column_int64(s, 0) : 0;
        sqlite3_reset(s);
        if (rc != SQLITE_ROW && rc != SQLITE_DONE) fail_locked(rc, "read msg_count");
        if (rc == SQLITE_DONE) {
            sqlite3_stmt* ins = stmt_locked(insert_session_,
                "INSERT INTO ania_chat_session(session_id, msg_count, created_at, updated_at) VALUES(?1, 0, ?2, ?2)");
            bind_text(ins, 1, session);
            bind_text(ins, 2, now);
            step_done_locked(ins, "create session");
        }
        return n;
    }

    void insert_locked(std::string_view session, std::int64_t seq, role r, const std::string& content, const std::string& now) {
        sqlite3_stmt* s = stmt_locked(insert_msg_,
            "INSERT INTO ania_chat_message(session_id, seq, role, content, created_at) VALUES(?1, ?2, ?3, ?4, ?5)");
        bind_text(s, 1, session);
        sqlite3_bind_int64(s, 2, seq);
        bind_text(s, 3, to_string(r));
        bind_text(s, 4, content);
        bind_text(s, 5, now);
        step_done_locked(s, "insert message");
    }

    void set_count_locked(std::string_view session, std::int64_t n, const std::string& now) {
        sqlite3_stmt* s = stmt_locked(update_count_,
            "UPDATE ania_chat_session SET msg_count = ?2, updated_at = ?3 WHERE session_id = ?1");
        bind_text(s, 1, session);
        sqlite3_bind_int64(s, 2, n);
        bind_text(s, 3, now);
        step_done_locked(s, "update msg_count");
    }

    std::string path_;
    sqlite_store_options opt_;
    mutable std::mutex mutex_;
    bool disabled_ = false;
    bool opened_ = false;  // the file was opened once (a later open failure is a reopen)
    std::set<std::string, std::less<>> with_skipped_rows_;  // sessions a load skipped rows of (see quarantine_locked)
    detail::sqlite_db db_;  // declared before the statements: destroyed after them
    detail::sqlite_stmt load_, select_count_, insert_session_, insert_msg_, update_count_, del_msgs_, del_session_,
        drop_, shift_, shift1_, shift2_, scan_, quarantine_;
};

static_assert(prefix_dropping_store<sqlite_store>);

} // namespace ania
