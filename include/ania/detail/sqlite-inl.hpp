// ania/detail/sqlite-inl.hpp -- the definitions of <ania/detail/sqlite.hpp>.
// Header-only mode includes this from there; compiled mode compiles it once, in the library (see
// <ania/detail/linkage.hpp>).
// SPDX-License-Identifier: MIT
#pragma once

#include <ania/detail/linkage.hpp>
#if !ANIA_HEADER_ONLY && !defined(ANIA_BUILDING_LIBRARY)
static_assert(false, "compiled mode: the library defines what <ania/detail/sqlite-inl.hpp> defines; include <ania/detail/sqlite.hpp>");
#endif

#include <algorithm>
#include <climits>

#include <ania/detail/sqlite.hpp>

namespace ania::detail {

ANIA_INLINE bool sqlite_needs_reopen(int rc) noexcept {
    const int primary = rc & 0xFF;
    return primary == SQLITE_IOERR || primary == SQLITE_FULL || primary == SQLITE_CORRUPT || primary == SQLITE_NOTADB;
}

ANIA_INLINE bool sqlite_is_busy(int rc) noexcept {
    const int primary = rc & 0xFF;
    return primary == SQLITE_BUSY || primary == SQLITE_LOCKED;
}

ANIA_INLINE errc sqlite_errc(int rc) noexcept {
    if (sqlite_is_busy(rc)) return errc::store_busy;
    if (sqlite_needs_reopen(rc)) return errc::store_io;
    return errc::store_error;
}

ANIA_INLINE void sqlite_exec(sqlite3* db, const std::string& sql) {
    char* msg = nullptr;
    const int rc = sqlite3_exec(db, sql.c_str(), nullptr, nullptr, &msg);
    if (rc != SQLITE_OK) {
        std::string text = msg ? msg : sqlite3_errstr(rc);
        sqlite3_free(msg);
        throw error(sqlite_errc(rc), sql.substr(0, 40) + ": " + text);
    }
}

ANIA_INLINE void sqlite_check_health(sqlite3* db, const std::string& path) {
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

ANIA_INLINE int sqlite_user_version(sqlite3* db) {
    sqlite3_stmt* raw = nullptr;
    sqlite3_prepare_v2(db, "PRAGMA user_version", -1, &raw, nullptr);
    sqlite_stmt s(raw);
    return raw && sqlite3_step(raw) == SQLITE_ROW ? sqlite3_column_int(raw, 0) : 0;
}

ANIA_INLINE sqlite_db sqlite_open_checked(const std::string& path, const sqlite_file_options& opt, const char* schema) {
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
    // Clamped to the int SQLite takes: a longer timeout would wrap (2^32 ms became 0: no waiting at all).
    sqlite3_busy_timeout(raw, static_cast<int>(std::clamp<std::chrono::milliseconds::rep>(opt.busy_timeout.count(), 0, INT_MAX)));
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

ANIA_INLINE sqlite_db sqlite_open_retrying(const std::string& path, const sqlite_file_options& opt, const char* schema) {
    for (int attempt = 1;; ++attempt) {
        try {
            return sqlite_open_checked(path, opt, schema);
        } catch (const error& e) {
            if (e.code() != errc::store_busy || attempt >= opt.open_attempts) throw;
        }
        std::this_thread::sleep_for(std::chrono::milliseconds(100) * (1 << std::min(attempt - 1, 5)));
    }
}

ANIA_INLINE sqlite_connection::sqlite_connection(std::string path, const sqlite_file_options& opt, const char* schema,
                                                 std::string owner)
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

ANIA_INLINE sqlite_connection::~sqlite_connection() { close(); }

ANIA_INLINE auto sqlite_connection::ready() -> bool {
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

ANIA_INLINE auto sqlite_connection::statement(const char* sql) -> sqlite3_stmt* {
    for (auto& [key, st] : cache_)
        if (key == sql) return st.get();
    sqlite3_stmt* raw = nullptr;
    const int rc = sqlite3_prepare_v3(db_.get(), sql, -1, SQLITE_PREPARE_PERSISTENT, &raw, nullptr);
    if (rc != SQLITE_OK) fail(rc, "prepare");
    cache_.emplace_back(sql, sqlite_stmt(raw));
    return raw;
}

ANIA_INLINE auto sqlite_connection::fail(int rc, std::string_view what) -> void {
    std::string text = owner_ + ": " + std::string(what) + " failed: " + (db_ ? sqlite3_errmsg(db_.get()) : "") + " (" +
                       sqlite3_errstr(rc) + ")";
    if (sqlite_needs_reopen(rc)) broken_ = true;
    throw error(sqlite_errc(rc), text);
}

ANIA_INLINE auto sqlite_connection::step_done(sqlite3_stmt* s, std::string_view what) -> void {
    const int rc = sqlite3_step(s);
    sqlite3_reset(s);
    sqlite3_clear_bindings(s);
    if (rc != SQLITE_DONE) fail(rc, what);
}

ANIA_INLINE auto sqlite_connection::exec(const char* sql) -> void {
    const int rc = sqlite3_exec(db_.get(), sql, nullptr, nullptr, nullptr);
    if (rc != SQLITE_OK) fail(rc, sql);
}

ANIA_INLINE auto sqlite_connection::close() noexcept -> void {
    cache_.clear();
    db_.reset();  // after the statements
}

ANIA_INLINE auto sqlite_connection::disable(const std::string& why) -> void {
    disabled_ = true;
    close();
    log_to(opt_.log, log_level::error, owner_ + ": DISABLED for " + path_ + " (the file is left untouched): " + why);
}

ANIA_INLINE auto sqlite_connection::bind_text(sqlite3_stmt* s, int i, std::string_view v) noexcept -> void {
    sqlite3_bind_text64(s, i, v.data(), v.size(), SQLITE_STATIC, SQLITE_UTF8);
}

ANIA_INLINE auto sqlite_connection::column(sqlite3_stmt* s, int i) noexcept -> std::string_view {
    const auto* p = static_cast<const char*>(sqlite3_column_blob(s, i));
    return p ? std::string_view(p, static_cast<std::size_t>(sqlite3_column_bytes(s, i))) : std::string_view();
}

ANIA_INLINE sqlite_use::sqlite_use(sqlite3_stmt* s) noexcept
    : s_(s) {}

ANIA_INLINE sqlite_use::~sqlite_use() {
    sqlite3_reset(s_);
    sqlite3_clear_bindings(s_);
}

ANIA_INLINE sqlite_transaction::sqlite_transaction(sqlite_connection& c, std::string_view what, bool immediate)
    : c_(c), what_(what) {
    const int rc = sqlite3_exec(c_.get(), immediate ? "BEGIN IMMEDIATE" : "BEGIN", nullptr, nullptr, nullptr);
    if (rc != SQLITE_OK) c_.fail(rc, what_);
}

ANIA_INLINE auto sqlite_transaction::commit() -> void {
    const int rc = sqlite3_exec(c_.get(), "COMMIT", nullptr, nullptr, nullptr);
    if (rc != SQLITE_OK) c_.fail(rc, what_);
    done_ = true;
}

ANIA_INLINE auto sqlite_transaction::rollback() noexcept -> void {
    if (c_.get() && !sqlite3_get_autocommit(c_.get())) sqlite3_exec(c_.get(), "ROLLBACK", nullptr, nullptr, nullptr);
    done_ = true;
}

ANIA_INLINE sqlite_transaction::~sqlite_transaction() {
    if (!done_) rollback();
}

} // namespace ania::detail
