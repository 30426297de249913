// ania/store/sqlite_store-inl.hpp -- the definitions of <ania/store/sqlite_store.hpp>.
// Header-only mode includes this from there; compiled mode compiles it once, in the library (see
// <ania/detail/linkage.hpp>).
// SPDX-License-Identifier: MIT
#pragma once

#include <ania/detail/linkage.hpp>
#if !ANIA_HEADER_ONLY && !defined(ANIA_BUILDING_LIBRARY)
static_assert(false, "compiled mode: the library defines what <ania/store/sqlite_store-inl.hpp> defines; include <ania/store/sqlite_store.hpp>");
#endif

#include <ania/json.hpp>
#include <ania/store/sqlite_store.hpp>

namespace ania {

ANIA_INLINE sqlite_store::sqlite_store(std::string path, sqlite_store_options opt)
    : opt_(std::move(opt)), db_(std::move(path), opt_, detail::sqlite_history_schema, "sqlite_store") {}

ANIA_INLINE auto sqlite_store::enabled() const -> bool {
    std::lock_guard lock(mutex_);
    return db_.enabled();
}

ANIA_INLINE auto sqlite_store::load(std::string_view session) -> std::vector<message> {
    std::vector<std::string> rows;
    {
        std::lock_guard lock(mutex_);
        if (!db_.ready()) return {};
        detail::sqlite_use s(db_.statement("SELECT seq, content FROM ania_chat_message WHERE session_id = ?1 ORDER BY seq"));
        bind(s, 1, session);
        int rc;
        while ((rc = sqlite3_step(s)) == SQLITE_ROW) rows.emplace_back(detail::sqlite_connection::column(s, 1));
        if (rc != SQLITE_DONE) db_.fail(rc, "load");
    }  // the cursor is released before parsing
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

ANIA_INLINE auto sqlite_store::append(std::string_view session, std::span<const message> msgs) -> void {
    if (msgs.empty()) return;
    const std::vector<std::string> rows = serialise(msgs);
    std::lock_guard lock(mutex_);
    if (!db_.ready()) return;
    detail::sqlite_transaction txn(db_, "append");
    const std::string now = detail::utc_now();
    std::int64_t seq = ensure_session_locked(session, now);
    for (std::size_t i = 0; i < rows.size(); ++i) insert_locked(session, seq++, msgs[i].role, rows[i], now);
    set_count_locked(session, seq, now);
    txn.commit();
}

ANIA_INLINE auto sqlite_store::replace(std::string_view session, std::span<const message> msgs) -> void {
    const std::vector<std::string> rows = serialise(msgs);
    std::lock_guard lock(mutex_);
    if (!db_.ready()) return;
    detail::sqlite_transaction txn(db_, "replace");
    const std::string now = detail::utc_now();
    ensure_session_locked(session, now);
    quarantine_locked(session, std::numeric_limits<std::int64_t>::max(), now);
    exec_bound_locked("DELETE FROM ania_chat_message WHERE session_id = ?1", session);
    for (std::size_t i = 0; i < rows.size(); ++i) insert_locked(session, static_cast<std::int64_t>(i), msgs[i].role, rows[i], now);
    set_count_locked(session, static_cast<std::int64_t>(rows.size()), now);
    txn.commit();
    // Every old row is gone (the unparseable ones to quarantine): none is left to look for. (drop_front
    // may leave some behind, so it keeps the mark.)
    forget_skipped_locked(session);
}

ANIA_INLINE auto sqlite_store::clear(std::string_view session) -> void {
    std::lock_guard lock(mutex_);
    if (!db_.ready()) return;
    detail::sqlite_transaction txn(db_, "clear");
    exec_bound_locked("DELETE FROM ania_chat_message WHERE session_id = ?1", session);
    exec_bound_locked("DELETE FROM ania_chat_session WHERE session_id = ?1", session);
    txn.commit();
    forget_skipped_locked(session);
}

ANIA_INLINE auto sqlite_store::drop_front(std::string_view session, std::size_t k) -> void {
    if (k == 0) return;
    std::lock_guard lock(mutex_);
    if (!db_.ready()) return;
    detail::sqlite_transaction txn(db_, "drop_front");
    const std::string now = detail::utc_now();
    const std::int64_t n = ensure_session_locked(session, now);
    const auto kk = static_cast<std::int64_t>(std::min<std::size_t>(k, static_cast<std::size_t>(n)));
    quarantine_locked(session, kk, now);
    const auto run = [&](const char* sql) {
        sqlite3_stmt* st = db_.statement(sql);
        bind(st, 1, session);
        sqlite3_bind_int64(st, 2, kk);
        db_.step_done(st, "drop_front");
    };
    run("DELETE FROM ania_chat_message WHERE session_id = ?1 AND seq < ?2");
    // An UPDATE may visit rows in any order, and the primary key must hold after every row. When no
    // more rows remain than were dropped (halving), every new seq lies in the freed range [0, kk): one
    // pass. Otherwise two passes through negative numbers.
    if (n - kk <= kk) {
        run("UPDATE ania_chat_message SET seq = seq - ?2 WHERE session_id = ?1");
    } else {
        run("UPDATE ania_chat_message SET seq = -1 - (seq - ?2) WHERE session_id = ?1");
        exec_bound_locked("UPDATE ania_chat_message SET seq = -1 - seq WHERE session_id = ?1", session);
    }
    set_count_locked(session, n - kk, now);
    txn.commit();
}

ANIA_INLINE auto sqlite_store::serialise(std::span<const message> msgs) const -> std::vector<std::string> {
    std::vector<std::string> rows;
    rows.reserve(msgs.size());
    for (const message& m : msgs) rows.push_back(dump(m, opt_.write));  // outside the lock and the transaction
    return rows;
}

ANIA_INLINE auto sqlite_store::forget_skipped_locked(std::string_view session) -> void {
    if (const auto it = with_skipped_rows_.find(session); it != with_skipped_rows_.end()) with_skipped_rows_.erase(it);
}

ANIA_INLINE auto sqlite_store::quarantine_locked(std::string_view session, std::int64_t below, const std::string& now) -> void {
    const auto flagged = with_skipped_rows_.find(session);
    if (flagged == with_skipped_rows_.end()) return;
    struct bad_row {
        std::int64_t seq;
        std::string content, created_at, reason;
    };
    std::vector<bad_row> bad;
    {
        detail::sqlite_use s(db_.statement(
            "SELECT seq, content, created_at FROM ania_chat_message WHERE session_id = ?1 AND seq < ?2 ORDER BY seq"));
        bind(s, 1, session);
        sqlite3_bind_int64(s, 2, below);
        int rc;
        while ((rc = sqlite3_step(s)) == SQLITE_ROW) {
            std::string content(detail::sqlite_connection::column(s, 1));
            try {
                (void)parse_message(content, opt_.limits);
            } catch (const std::exception& e) {
                bad.push_back({sqlite3_column_int64(s, 0), std::move(content),
                               std::string(detail::sqlite_connection::column(s, 2)), e.what()});
            }
        }
        if (rc != SQLITE_DONE) db_.fail(rc, "quarantine scan");
    }
    for (const bad_row& b : bad) {
        sqlite3_stmt* q = db_.statement("INSERT INTO ania_chat_quarantine(session_id, seq, content, created_at, "
                                        "quarantined_at, reason) VALUES(?1, ?2, ?3, ?4, ?5, ?6)");
        bind(q, 1, session);
        sqlite3_bind_int64(q, 2, b.seq);
        bind(q, 3, b.content);
        bind(q, 4, b.created_at);
        bind(q, 5, now);
        bind(q, 6, b.reason);
        db_.step_done(q, "quarantine");
    }
    if (!bad.empty())
        log_to(opt_.log, log_level::warn, "sqlite_store: " + std::to_string(bad.size()) + " unparseable stored message(s) of a "
                                          "session moved to ania_chat_quarantine instead of being deleted");
}

ANIA_INLINE auto sqlite_store::exec_bound_locked(const char* sql, std::string_view session) -> void {
    sqlite3_stmt* s = db_.statement(sql);
    bind(s, 1, session);
    db_.step_done(s, "write");
}

ANIA_INLINE auto sqlite_store::ensure_session_locked(std::string_view session, const std::string& now) -> std::int64_t {
    int rc;
    std::int64_t n = 0;
    {
        detail::sqlite_use s(db_.statement("SELECT msg_count FROM ania_chat_session WHERE session_id = ?1"));
        bind(s, 1, session);
        rc = sqlite3_step(s);
        if (rc == SQLITE_ROW) n = sqlite3_column_int64(s, 0);
    }
    if (rc != SQLITE_ROW && rc != SQLITE_DONE) db_.fail(rc, "read msg_count");
    if (rc == SQLITE_DONE) {
        sqlite3_stmt* ins = db_.statement(
            "INSERT INTO ania_chat_session(session_id, msg_count, created_at, updated_at) VALUES(?1, 0, ?2, ?2)");
        bind(ins, 1, session);
        bind(ins, 2, now);
        db_.step_done(ins, "create session");
    }
    return n;
}

ANIA_INLINE auto sqlite_store::insert_locked(std::string_view session, std::int64_t seq, role r,
                                             const std::string& content, const std::string& now) -> void {
    sqlite3_stmt* s = db_.statement(
        "INSERT INTO ania_chat_message(session_id, seq, role, content, created_at) VALUES(?1, ?2, ?3, ?4, ?5)");
    bind(s, 1, session);
    sqlite3_bind_int64(s, 2, seq);
    bind(s, 3, to_string(r));
    bind(s, 4, content);
    bind(s, 5, now);
    db_.step_done(s, "insert message");
}

ANIA_INLINE auto sqlite_store::set_count_locked(std::string_view session, std::int64_t n, const std::string& now) -> void {
    sqlite3_stmt* s = db_.statement("UPDATE ania_chat_session SET msg_count = ?2, updated_at = ?3 WHERE session_id = ?1");
    bind(s, 1, session);
    sqlite3_bind_int64(s, 2, n);
    bind(s, 3, now);
    db_.step_done(s, "update msg_count");
}

ANIA_INLINE sqlite_store::~sqlite_store() = default;

} // namespace ania
