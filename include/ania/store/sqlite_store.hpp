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

#include <ania/detail/linkage.hpp>
#include <ania/concepts.hpp>
#include <ania/detail/sqlite.hpp>
#include <ania/detail/timestamp.hpp>
#include <ania/error.hpp>
#include <ania/history/archive.hpp>
#include <ania/json_fwd.hpp>
#include <ania/log.hpp>
#include <ania/message.hpp>

namespace ania {

/// sqlite_file_options (detail/sqlite.hpp: synchronous, busy_timeout, vfs, pragmas, open_attempts, log), and
/// how rows are read and written.
struct sqlite_store_options : sqlite_file_options {
    parse_limits limits{};   ///< applied to every stored row when loading
    write_options write{};   ///< how messages are serialised into `content`
    archive_options archive{};  ///< the bounds of each session's archive (ania_chat_archive)
};

namespace detail {

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
    " reason TEXT NOT NULL);"
    // Non-destructive compaction (archiving_store): what a compaction removed, numbered per session by
    // ania_chat_archive_state.next_seq; the summaries that replaced each batch; the bounds' bookkeeping.
    "CREATE TABLE IF NOT EXISTS ania_chat_archive("
    " session_id TEXT NOT NULL,"
    " seq INTEGER NOT NULL,"
    " role TEXT NOT NULL,"
    " content TEXT NOT NULL,"
    " bytes INTEGER NOT NULL,"
    " archived_at TEXT NOT NULL,"
    " PRIMARY KEY(session_id, seq));"
    "CREATE TABLE IF NOT EXISTS ania_chat_archive_summary("
    " session_id TEXT NOT NULL,"
    " first_seq INTEGER NOT NULL,"
    " count INTEGER NOT NULL,"
    " summary TEXT NOT NULL,"
    " archived_at TEXT NOT NULL,"
    " PRIMARY KEY(session_id, first_seq));"
    "CREATE TABLE IF NOT EXISTS ania_chat_archive_state("
    " session_id TEXT PRIMARY KEY,"
    " first_seq INTEGER NOT NULL,"
    " next_seq INTEGER NOT NULL,"
    " messages INTEGER NOT NULL,"
    " bytes INTEGER NOT NULL);";

} // namespace detail

/// A history_store on one SQLite file (WAL). Safe to share between threads (one connection behind a
/// mutex) and between processes (every write is one BEGIN IMMEDIATE transaction; seq comes from msg_count,
/// the allocator: replace renumbers from 0, drop_front leaves the survivors' seq as they were).
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
    explicit sqlite_store(std::string path, sqlite_store_options opt = {});

    ~sqlite_store();  // out of line: its members' destructors are the library's code in compiled mode
    sqlite_store(const sqlite_store&) = delete;
    sqlite_store& operator=(const sqlite_store&) = delete;

    /// False when persistence was disabled at open (see the class comment).
    [[nodiscard]] bool enabled() const;
    [[nodiscard]] const std::string& path() const noexcept { return db_.path(); }

    /// The stored messages in seq order. Rows that do not parse as a message are skipped and logged;
    /// a read error (I/O, corruption) throws rather than returning a prefix.
    [[nodiscard]] std::vector<message> load(std::string_view session);

    /// Appends in one transaction: all messages are stored or none.
    void append(std::string_view session, std::span<const message> msgs);

    /// Overwrites the session's history, renumbering seq from 0, in one transaction.
    void replace(std::string_view session, std::span<const message> msgs);

    /// Deletes the session from both tables (an explicit forget: unparseable rows go too), and its archive
    /// unless options().archive.keep_on_clear. A missing session is a no-op.
    void clear(std::string_view session);

    /// Drops the first k messages; the rest keep their seq (msg_count stays the allocator: later appends
    /// continue after them).
    void drop_front(std::string_view session, std::size_t k);

    // archiving_store (see <ania/concepts.hpp>): each in one transaction with the archive's rows.
    void replace_archiving(std::string_view session, std::span<const message> msgs, const archive_batch& batch);
    void drop_front_archiving(std::string_view session, std::size_t k, const archive_batch& batch);
    /// Rows that do not parse are skipped (counted in archive_slice::skipped) and logged.
    [[nodiscard]] archive_slice read_archive(std::string_view session, std::int64_t from, std::size_t count);
    void clear_archive(std::string_view session);

    [[nodiscard]] const sqlite_store_options& options() const noexcept { return opt_; }

private:
    void replace_locked(std::string_view session, std::span<const message> msgs, const std::vector<std::string>& rows,
                        const std::string& now);
    void drop_front_locked(std::string_view session, std::size_t k, const std::string& now);
    void archive_locked(std::string_view session, const archive_batch& batch, const std::vector<std::string>& rows);
    void clear_archive_locked(std::string_view session);

    static void bind(sqlite3_stmt* s, int i, std::string_view v) noexcept { detail::sqlite_connection::bind_text(s, i, v); }

    std::vector<std::string> serialise(std::span<const message> msgs) const;

    /// The session's rows hold nothing unparseable any more (replaced or cleared).
    void forget_skipped_locked(std::string_view session);

    /// Before rows [0, below) of a session that a load found unparseable rows in are deleted: moves every
    /// such row of that range to ania_chat_quarantine (inside the caller's transaction) and logs it. Parsing
    /// runs only for sessions whose load skipped something.
    void quarantine_locked(std::string_view session, std::int64_t below, const std::string& now);

    void exec_bound_locked(const char* sql, std::string_view session);
    /// The same with ?2 bound to `n`.
    void exec_bound_locked(const char* sql, std::string_view session, std::int64_t n);

    /// The session's msg_count, creating its row (count 0) when missing.
    std::int64_t ensure_session_locked(std::string_view session, const std::string& now);

    void insert_locked(std::string_view session, std::int64_t seq, role r, const std::string& content,
                       const std::string& now);

    void set_count_locked(std::string_view session, std::int64_t n, const std::string& now);

    sqlite_store_options opt_;
    mutable std::mutex mutex_;
    std::set<std::string, std::less<>> with_skipped_rows_;  // sessions a load skipped rows of (see quarantine_locked)
    detail::sqlite_connection db_;
};

static_assert(prefix_dropping_store<sqlite_store>);

} // namespace ania

#if !ANIA_HEADER_ONLY
#include <ania/history/background_writer.hpp>
namespace ania {
extern template class background_writer<sqlite_store>;  // in the compiled SQLite library
} // namespace ania
#endif

#if ANIA_HEADER_ONLY
#include <ania/store/sqlite_store-inl.hpp>
#endif
