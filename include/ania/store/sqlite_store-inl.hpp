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
#include <ania/json_writer.hpp>
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
    replace_locked(session, msgs, rows, detail::utc_now());
    txn.commit();
    // Every old row is gone (the unparseable ones to quarantine): none is left to look for. (drop_front
    // may leave some behind, so it keeps the mark.)
    forget_skipped_locked(session);
}

ANIA_INLINE auto sqlite_store::replace_locked(std::string_view session, std::span<const message> msgs,
                                              const std::vector<std::string>& rows, const std::string& now) -> void {
    ensure_session_locked(session, now);
    quarantine_locked(session, std::numeric_limits<std::int64_t>::max(), now);
    exec_bound_locked("DELETE FROM ania_chat_message WHERE session_id = ?1", session);
    for (std::size_t i = 0; i < rows.size(); ++i) insert_locked(session, static_cast<std::int64_t>(i), msgs[i].role, rows[i], now);
    set_count_locked(session, static_cast<std::int64_t>(rows.size()), now);
}

ANIA_INLINE auto sqlite_store::clear(std::string_view session) -> void {
    std::lock_guard lock(mutex_);
    if (!db_.ready()) return;
    detail::sqlite_transaction txn(db_, "clear");
    exec_bound_locked("DELETE FROM ania_chat_message WHERE session_id = ?1", session);
    exec_bound_locked("DELETE FROM ania_chat_session WHERE session_id = ?1", session);
    if (!opt_.archive.keep_on_clear) clear_archive_locked(session);
    txn.commit();
    forget_skipped_locked(session);
}

ANIA_INLINE auto sqlite_store::drop_front(std::string_view session, std::size_t k) -> void {
    if (k == 0) return;
    std::lock_guard lock(mutex_);
    if (!db_.ready()) return;
    detail::sqlite_transaction txn(db_, "drop_front");
    drop_front_locked(session, k, detail::utc_now());
    txn.commit();
}

ANIA_INLINE auto sqlite_store::drop_front_locked(std::string_view session, std::size_t k, const std::string& now) -> void {
    // The survivors keep their seq (msg_count is the allocator, SPEC §2, not the count): one range DELETE, no
    // renumbering UPDATE (which rewrote every surviving row's key: 1.4 ms for 500 of 1000).
    const std::int64_t next = ensure_session_locked(session, now);
    std::int64_t cut = std::numeric_limits<std::int64_t>::max();  // past every row: all go
    {
        detail::sqlite_use s(db_.statement("SELECT seq FROM ania_chat_message WHERE session_id = ?1 ORDER BY seq LIMIT 1 OFFSET ?2"));
        bind(s, 1, session);
        sqlite3_bind_int64(s, 2, static_cast<std::int64_t>(std::min<std::size_t>(k, static_cast<std::size_t>(std::numeric_limits<std::int64_t>::max()))));
        const int rc = sqlite3_step(s);
        if (rc == SQLITE_ROW) cut = sqlite3_column_int64(s, 0);
        else if (rc != SQLITE_DONE) db_.fail(rc, "drop_front");
    }
    quarantine_locked(session, cut, now);
    exec_bound_locked("DELETE FROM ania_chat_message WHERE session_id = ?1 AND seq < ?2", session, cut);
    set_count_locked(session, next, now);  // unchanged; updated_at moves
}

ANIA_INLINE auto sqlite_store::replace_archiving(std::string_view session, std::span<const message> msgs,
                                                 const archive_batch& batch) -> void {
    const std::vector<std::string> rows = serialise(msgs);
    const std::vector<std::string> archived = serialise(batch.messages);
    std::lock_guard lock(mutex_);
    if (!db_.ready()) return;
    detail::sqlite_transaction txn(db_, "replace_archiving");
    replace_locked(session, msgs, rows, detail::utc_now());
    archive_locked(session, batch, archived);
    txn.commit();
    forget_skipped_locked(session);
}

ANIA_INLINE auto sqlite_store::drop_front_archiving(std::string_view session, std::size_t k, const archive_batch& batch) -> void {
    const std::vector<std::string> archived = serialise(batch.messages);
    std::lock_guard lock(mutex_);
    if (!db_.ready()) return;
    detail::sqlite_transaction txn(db_, "drop_front_archiving");
    if (k > 0) drop_front_locked(session, k, detail::utc_now());
    archive_locked(session, batch, archived);
    txn.commit();
}

ANIA_INLINE auto sqlite_store::archive_locked(std::string_view session, const archive_batch& batch,
                                              const std::vector<std::string>& rows) -> void {
    if (rows.empty()) return;
    std::int64_t first = 0, next = 0, count = 0, bytes = 0;
    {
        detail::sqlite_use s(db_.statement("SELECT first_seq, next_seq, messages, bytes FROM ania_chat_archive_state WHERE session_id = ?1"));
        bind(s, 1, session);
        const int rc = sqlite3_step(s);
        if (rc == SQLITE_ROW) {
            first = sqlite3_column_int64(s, 0);
            next = sqlite3_column_int64(s, 1);
            count = sqlite3_column_int64(s, 2);
            bytes = sqlite3_column_int64(s, 3);
        } else if (rc != SQLITE_DONE) {
            db_.fail(rc, "read the archive state");
        }
    }
    const std::int64_t batch_first = next;
    for (std::size_t i = 0; i < rows.size(); ++i) {
        const auto b = static_cast<std::int64_t>(archived_bytes(batch.messages[i]));
        sqlite3_stmt* s = db_.statement("INSERT INTO ania_chat_archive(session_id, seq, role, content, bytes, archived_at) "
                                        "VALUES(?1, ?2, ?3, ?4, ?5, ?6)");
        bind(s, 1, session);
        sqlite3_bind_int64(s, 2, next++);
        bind(s, 3, to_string(batch.messages[i].role));
        bind(s, 4, rows[i]);
        sqlite3_bind_int64(s, 5, b);
        bind(s, 6, batch.archived_at);
        db_.step_done(s, "archive a message");
        bytes += b;
        ++count;
    }
    {
        sqlite3_stmt* s = db_.statement("INSERT INTO ania_chat_archive_summary(session_id, first_seq, count, summary, archived_at) "
                                        "VALUES(?1, ?2, ?3, ?4, ?5)");
        bind(s, 1, session);
        sqlite3_bind_int64(s, 2, batch_first);
        sqlite3_bind_int64(s, 3, static_cast<std::int64_t>(rows.size()));
        bind(s, 4, batch.summary);
        bind(s, 5, batch.archived_at);
        db_.step_done(s, "archive a summary");
    }
    const archive_options& cap = opt_.archive;
    if ((cap.max_messages && static_cast<std::size_t>(count) > cap.max_messages) ||
        (cap.max_bytes && static_cast<std::size_t>(bytes) > cap.max_bytes)) {
        std::vector<std::size_t> sizes;  // oldest first, from `first`: the rows are contiguous
        {
            detail::sqlite_use s(db_.statement("SELECT bytes FROM ania_chat_archive WHERE session_id = ?1 ORDER BY seq"));
            bind(s, 1, session);
            int rc;
            while ((rc = sqlite3_step(s)) == SQLITE_ROW) sizes.push_back(static_cast<std::size_t>(sqlite3_column_int64(s, 0)));
            if (rc != SQLITE_DONE) db_.fail(rc, "read the archive's sizes");
        }
        const detail::archive_trim trim = detail::archive_cut(first, sizes.size(), static_cast<std::size_t>(bytes), cap,
                                                              [&](std::size_t i) { return sizes[i]; });
        count -= trim.first_seq - first;
        first = trim.first_seq;
        bytes = static_cast<std::int64_t>(trim.bytes);
        exec_bound_locked("DELETE FROM ania_chat_archive WHERE session_id = ?1 AND seq < ?2", session, first);
        exec_bound_locked("DELETE FROM ania_chat_archive_summary WHERE session_id = ?1 AND first_seq + count <= ?2", session, first);
    }
    sqlite3_stmt* s = db_.statement("INSERT INTO ania_chat_archive_state(session_id, first_seq, next_seq, messages, bytes) "
                                    "VALUES(?1, ?2, ?3, ?4, ?5) ON CONFLICT(session_id) DO UPDATE SET first_seq = excluded.first_seq, "
                                    "next_seq = excluded.next_seq, messages = excluded.messages, bytes = excluded.bytes");
    bind(s, 1, session);
    sqlite3_bind_int64(s, 2, first);
    sqlite3_bind_int64(s, 3, next);
    sqlite3_bind_int64(s, 4, count);
    sqlite3_bind_int64(s, 5, bytes);
    db_.step_done(s, "update the archive state");
}

ANIA_INLINE auto sqlite_store::clear_archive_locked(std::string_view session) -> void {
    exec_bound_locked("DELETE FROM ania_chat_archive WHERE session_id = ?1", session);
    exec_bound_locked("DELETE FROM ania_chat_archive_summary WHERE session_id = ?1", session);
    // The numbers stay: a seq is never reused.
    exec_bound_locked("UPDATE ania_chat_archive_state SET first_seq = next_seq, messages = 0, bytes = 0 WHERE session_id = ?1", session);
}

ANIA_INLINE auto sqlite_store::clear_archive(std::string_view session) -> void {
    std::lock_guard lock(mutex_);
    if (!db_.ready()) return;
    detail::sqlite_transaction txn(db_, "clear_archive");
    clear_archive_locked(session);
    txn.commit();
}

ANIA_INLINE auto sqlite_store::read_archive(std::string_view session, std::int64_t from, std::size_t count) -> archive_slice {
    archive_slice out;
    struct raw {
        std::int64_t seq;
        std::string at, content;
    };
    std::vector<raw> rows;
    {
        std::lock_guard lock(mutex_);
        if (!db_.ready()) return out;
        // One read transaction: the state and the rows of one snapshot (another process may be archiving).
        detail::sqlite_transaction txn(db_, "read_archive", /*immediate=*/false);
        {
            detail::sqlite_use s(db_.statement("SELECT first_seq, next_seq FROM ania_chat_archive_state WHERE session_id = ?1"));
            bind(s, 1, session);
            const int rc = sqlite3_step(s);
            if (rc == SQLITE_ROW) {
                out.first_seq = sqlite3_column_int64(s, 0);
                out.next_seq = sqlite3_column_int64(s, 1);
            } else if (rc != SQLITE_DONE) {
                db_.fail(rc, "read the archive state");
            }
        }
        const std::int64_t begin = std::max(from, out.first_seq);
        const auto limit = static_cast<std::int64_t>(std::min<std::size_t>(count, static_cast<std::size_t>(std::numeric_limits<std::int64_t>::max())));
        if (begin < out.next_seq && limit > 0) {
            {
                detail::sqlite_use s(db_.statement("SELECT seq, archived_at, content FROM ania_chat_archive WHERE session_id = ?1 "
                                                   "AND seq >= ?2 ORDER BY seq LIMIT ?3"));
                bind(s, 1, session);
                sqlite3_bind_int64(s, 2, begin);
                sqlite3_bind_int64(s, 3, limit);
                int rc;
                while ((rc = sqlite3_step(s)) == SQLITE_ROW)
                    rows.push_back({sqlite3_column_int64(s, 0), std::string(detail::sqlite_connection::column(s, 1)),
                                    std::string(detail::sqlite_connection::column(s, 2))});
                if (rc != SQLITE_DONE) db_.fail(rc, "read the archive");
            }
            if (!rows.empty()) {
                detail::sqlite_use s(db_.statement("SELECT first_seq, count, summary, archived_at FROM ania_chat_archive_summary "
                                                   "WHERE session_id = ?1 AND first_seq <= ?3 AND first_seq + count > ?2 ORDER BY first_seq"));
                bind(s, 1, session);
                sqlite3_bind_int64(s, 2, rows.front().seq);
                sqlite3_bind_int64(s, 3, rows.back().seq);
                int rc;
                while ((rc = sqlite3_step(s)) == SQLITE_ROW)
                    out.summaries.push_back({sqlite3_column_int64(s, 0), sqlite3_column_int64(s, 1),
                                             std::string(detail::sqlite_connection::column(s, 2)),
                                             std::string(detail::sqlite_connection::column(s, 3))});
                if (rc != SQLITE_DONE) db_.fail(rc, "read the archive's summaries");
            }
        }
        txn.commit();
    }  // parsed outside the lock
    out.messages.reserve(rows.size());
    for (raw& r : rows) {
        try {
            out.messages.push_back({r.seq, std::move(r.at), parse_message(r.content, opt_.limits)});
        } catch (const std::exception& e) {
            ++out.skipped;
            log_to(opt_.log, log_level::warn, "sqlite_store: skipped archived message " + std::to_string(r.seq) + " of a session: " + e.what());
        }
    }
    return out;
}

ANIA_INLINE auto sqlite_store::serialise(std::span<const message> msgs) const -> std::vector<std::string> {
    std::vector<std::string> rows;
    rows.reserve(msgs.size());
    for (const message& m : msgs) {  // outside the lock and the transaction
        // dump's bytes by the direct writer (json_writer.hpp): several times faster than through a DOM.
        std::string& row = rows.emplace_back();
        row.reserve(m.content.size() + 48);
        append_json(row, m, opt_.write);
    }
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

ANIA_INLINE auto sqlite_store::exec_bound_locked(const char* sql, std::string_view session, std::int64_t n) -> void {
    sqlite3_stmt* s = db_.statement(sql);
    bind(s, 1, session);
    sqlite3_bind_int64(s, 2, n);
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
