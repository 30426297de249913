// ania/memory/sqlite_backend.hpp -- memories as SQLite rows: ania_memory (SPEC §4).
// SPDX-License-Identifier: MIT
#pragma once

#include <cmath>
#include <cstdint>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <ania/detail/linkage.hpp>
#include <ania/log.hpp>
#include <ania/memory/columns.hpp>
#include <ania/memory/concepts.hpp>
#include <ania/memory/entry.hpp>
#include <ania/memory/traits.hpp>
#include <ania/detail/sqlite.hpp>

namespace ania::memory {

namespace detail {
inline constexpr const char* memory_schema =
    "CREATE TABLE IF NOT EXISTS ania_memory("
    " scope TEXT NOT NULL,"
    " id TEXT NOT NULL,"
    " user_id TEXT NOT NULL DEFAULT '',"
    " content TEXT NOT NULL,"
    " tags TEXT NOT NULL DEFAULT '[]',"   // JSON array of strings
    " emb TEXT NOT NULL DEFAULT '[]',"    // JSON array of numbers; [] = no vector
    " created_at TEXT NOT NULL,"          // YYYY-MM-DDTHH:MM:SS.nnnnnnnnnZ
    " PRIMARY KEY(scope, id));"
    // Bumped in the transaction of every write of a scope: how another process's manager sees the change.
    "CREATE TABLE IF NOT EXISTS ania_memory_version("
    " scope TEXT PRIMARY KEY,"
    " version INTEGER NOT NULL);"
    // The versions of each entry (memory/provenance.hpp). Added to an older file when it is opened; its
    // rows get a baseline version at their first recorded change.
    "CREATE TABLE IF NOT EXISTS ania_memory_history("
    " scope TEXT NOT NULL,"
    " id TEXT NOT NULL,"
    " seq INTEGER NOT NULL,"
    " kind TEXT NOT NULL,"
    " actor TEXT NOT NULL DEFAULT '',"
    " session TEXT NOT NULL DEFAULT '',"
    " tool_call_id TEXT NOT NULL DEFAULT '',"
    " at TEXT NOT NULL,"
    " user_id TEXT NOT NULL DEFAULT '',"
    " content TEXT NOT NULL,"
    " tags TEXT NOT NULL DEFAULT '[]',"
    " PRIMARY KEY(scope, id, seq));";
} // namespace detail

/// How the memory file is opened: the options every ania SQLite file has (detail/sqlite.hpp).
using sqlite_backend_options = sqlite_file_options;

/// One row per memory in `ania_memory(scope, id, user_id, content, tags, emb, created_at)`, PRIMARY KEY(scope, id),
/// and a per-scope version in `ania_memory_version` (see versioned_memory_backend), so several processes
/// (or managers) can share the file — also the history store's file. If the file is unhealthy, read-only or
/// the table cannot be created, `enabled()` is false (logged): the memory feature is then disabled as a
/// whole, and nothing is written. A file that is merely busy is opened on first use instead. After an I/O
/// error the connection is reopened by the next call. Thread-safe (one connection behind a mutex).
class sqlite_backend {
public:
    explicit sqlite_backend(std::string path, sqlite_backend_options opt = {});
    ~sqlite_backend();  // out of line: its members' destructors are the library's code in compiled mode

    [[nodiscard]] bool enabled() const noexcept;

    [[nodiscard]] std::vector<entry> load(const scope& s) const;

    [[nodiscard]] std::vector<std::string> scopes() const;

    /// The scope's version: 0 for a scope never written.
    [[nodiscard]] std::uint64_t version(const scope& s) const;

    static constexpr const char* insert_sql =
        "INSERT INTO ania_memory(scope, id, user_id, content, tags, emb, created_at) VALUES(?1, ?2, ?3, ?4, ?5, ?6, ?7)";
    static constexpr const char* update_sql =
        "UPDATE ania_memory SET user_id = ?3, content = ?4, tags = ?5, emb = ?6, created_at = ?7 WHERE scope = ?1 AND id = ?2";
    static constexpr const char* erase_sql = "DELETE FROM ania_memory WHERE scope = ?1 AND id = ?2";

    std::uint64_t insert(const scope& s, const entry& e) { return *write(insert_sql, s, &e, e.id, std::nullopt, nullptr); }
    /// Inserts only if the scope is still at version `expected` (checked inside the write transaction).
    std::optional<std::uint64_t> insert_if(const scope& s, const entry& e, std::uint64_t expected) {
        return write(insert_sql, s, &e, e.id, expected, nullptr);
    }
    std::uint64_t update(const scope& s, const entry& e) { return *write(update_sql, s, &e, e.id, std::nullopt, nullptr); }
    std::uint64_t erase(const scope& s, std::string_view id) { return *write(erase_sql, s, nullptr, id, std::nullopt, nullptr); }

    // The same writes with the change's version, recorded in the write's transaction (history_memory_backend).
    [[nodiscard]] std::vector<memory_version> history(const scope& s, std::string_view id) const;
    std::uint64_t insert(const scope& s, const entry& e, const version_note& n) { return *write(insert_sql, s, &e, e.id, std::nullopt, &n); }
    std::optional<std::uint64_t> insert_if(const scope& s, const entry& e, std::uint64_t expected, const version_note& n) {
        return write(insert_sql, s, &e, e.id, expected, &n);
    }
    std::uint64_t update(const scope& s, const entry& e, const version_note& n) { return *write(update_sql, s, &e, e.id, std::nullopt, &n); }
    std::uint64_t erase(const scope& s, std::string_view id, const version_note& n) { return *write(erase_sql, s, nullptr, id, std::nullopt, &n); }

private:
    static void bind(sqlite3_stmt* st, int i, std::string_view v) noexcept { ania::detail::sqlite_connection::bind_text(st, i, v); }
    static std::string column(sqlite3_stmt* st, int i) { return std::string(ania::detail::sqlite_connection::column(st, i)); }

    std::uint64_t version_locked(const scope& s) const;

    /// One write, its version (`note`) and the scope's version bump in one transaction; returns the new
    /// version, or nullopt when `expected` is given and the scope is at another version (nothing is written
    /// then). Disabled: 0.
    std::optional<std::uint64_t> write(const char* sql, const scope& s, const entry* e, std::string_view id,
                                       std::optional<std::uint64_t> expected, const version_note* note);
    void record_locked(const scope& s, std::string_view id, const version_note& n);

    mutable std::mutex mutex_;
    mutable ania::detail::sqlite_connection db_;
};

static_assert(versioned_memory_backend<sqlite_backend> && history_memory_backend<sqlite_backend>);

/// The spec's memory on the embedded SQLite default.
struct sqlite_memory_traits : default_memory_traits {
    using backend = sqlite_backend;
};
using sqlite_manager = basic_manager<sqlite_memory_traits>;  // memory/manager.hpp

} // namespace ania::memory

#if !ANIA_HEADER_ONLY
#include <ania/memory/manager.hpp>
namespace ania::memory {
template <>
struct detail::manager_definitions_for<sqlite_memory_traits> {};
extern template class basic_manager<sqlite_memory_traits>;  // in the compiled SQLite library
} // namespace ania::memory
#endif

#if ANIA_HEADER_ONLY
#include <ania/memory/sqlite_backend-inl.hpp>
#endif
