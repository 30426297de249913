// ania/memory/sqlite_backend.hpp -- memories as SQLite rows: ania_memory (SPEC §4).
// SPDX-License-Identifier: MIT
#pragma once

#include <mutex>
#include <string>
#include <string_view>
#include <vector>

#include <ania/json.hpp>
#include <ania/log.hpp>
#include <ania/memory/entry.hpp>
#include <ania/store/sqlite_store.hpp>

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
    " PRIMARY KEY(scope, id));";
} // namespace detail

/// One row per memory in `ania_memory(scope, id, user_id, content, tags, emb, created_at)`, PRIMARY KEY(scope, id).
/// If the file is unhealthy or the table cannot be created, `enabled()` is false (logged): the memory feature
/// is then disabled as a whole, and nothing is written. Thread-safe (one connection behind a mutex).
class sqlite_backend {
public:
    explicit sqlite_backend(std::string path, sqlite_store_options opt = {}) : path_(std::move(path)), opt_(std::move(opt)) {
        try {
            db_ = ania::detail::sqlite_open_checked(path_, opt_, detail::memory_schema);
        } catch (const std::exception& e) {
            log_to(opt_.log, log_level::error, "memory: DISABLED, " + path_ + " cannot hold ania_memory: " + e.what());
        }
    }

    [[nodiscard]] bool enabled() const noexcept { return db_ != nullptr; }

    [[nodiscard]] std::vector<entry> load(const scope& s) const {
        std::lock_guard lock(mutex_);
        std::vector<entry> out;
        if (!db_) return out;
        auto st = prepare("SELECT id, user_id, content, tags, emb, created_at FROM ania_memory WHERE scope = ?1 ORDER BY created_at, id");
        bind(st.get(), 1, s.str());
        int rc;
        while ((rc = sqlite3_step(st.get())) == SQLITE_ROW) {
            entry e;
            e.id = column(st.get(), 0);
            e.user_id = column(st.get(), 1);
            e.content = text::repair_utf8(column(st.get(), 2));
            e.created_at = column(st.get(), 5);
            try {
                const json tags = parse_json(column(st.get(), 3));
                for (const json& t : tags)
                    if (t.is_string()) e.tags.push_back(t.get<std::string>());
                const json emb = parse_json(column(st.get(), 4));
                for (const json& x : emb)
                    if (x.is_number()) e.embedding.push_back(x.get<float>());
            } catch (const std::exception& ex) {
                log_to(opt_.log, log_level::warn, "memory: malformed tags or emb of " + e.id + " in " + s.str() + " ignored: " + ex.what());
            }
            out.push_back(std::move(e));
        }
        if (rc != SQLITE_DONE) fail(rc, "load");
        return out;
    }

    [[nodiscard]] std::vector<std::string> scopes() const {
        std::lock_guard lock(mutex_);
        std::vector<std::string> out;
        if (!db_) return out;
        auto st = prepare("SELECT DISTINCT scope FROM ania_memory ORDER BY scope");
        while (sqlite3_step(st.get()) == SQLITE_ROW) out.push_back(column(st.get(), 0));
        return out;
    }

    void insert(const scope& s, const entry& e) {
        write("INSERT INTO ania_memory(scope, id, user_id, content, tags, emb, created_at) VALUES(?1, ?2, ?3, ?4, ?5, ?6, ?7)", s, e);
    }
    void update(const scope& s, const entry& e) {
        write("UPDATE ania_memory SET user_id = ?3, content = ?4, tags = ?5, emb = ?6, created_at = ?7 WHERE scope = ?1 AND id = ?2", s, e);
    }
    void erase(const scope& s, std::string_view id) {
        std::lock_guard lock(mutex_);
        if (!db_) return;
        auto st = prepare("DELETE FROM ania_memory WHERE scope = ?1 AND id = ?2");
        bind(st.get(), 1, s.str());
        bind(st.get(), 2, id);
        const int rc = sqlite3_step(st.get());
        if (rc != SQLITE_DONE) fail(rc, "erase");
    }

private:
    ania::detail::sqlite_stmt prepare(const char* sql) const {
        sqlite3_stmt* raw = nullptr;
        const int rc = sqlite3_prepare_v2(db_.get(), sql, -1, &raw, nullptr);
        if (rc != SQLITE_OK) fail(rc, "prepare");
        return ania::detail::sqlite_stmt(raw);
    }
    static void bind(sqlite3_stmt* st, int i, std::string_view v) {
        sqlite3_bind_text64(st, i, v.data(), v.size(), SQLITE_TRANSIENT, SQLITE_UTF8);
    }
    static std::string column(sqlite3_stmt* st, int i) {
        const auto* p = static_cast<const char*>(sqlite3_column_blob(st, i));
        return p ? std::string(p, static_cast<std::size_t>(sqlite3_column_bytes(st, i))) : std::string();
    }
    [[noreturn]] void fail(int rc, const char* what) const {
        throw error(errc::store_error, std::string("memory sqlite_backend: ") + what + " failed: " + sqlite3_errmsg(db_.get()) +
                                           " (" + sqlite3_errstr(rc) + ")");
    }

    void write(const char* sql, const scope& s, const entry& e) {
        json tags = json::array();
        for (const auto& t : e.tags) tags.push_back(t);
        json emb = json::array();
        for (const float x : e.embedding) emb.push_back(x);
        const std::string tags_text = tags.dump(-1, ' ', false, json::error_handler_t::replace);
        const std::string emb_text = emb.dump();
        std::lock_guard lock(mutex_);
        if (!db_) return;
        auto st = prepare(sql);
        bind(st.get(), 1, s.str());
        bind(st.get(), 2, e.id);
        bind(st.get(), 3, e.user_id);
        bind(st.get(), 4, e.content);
        bind(st.get(), 5, tags_text);
        bind(st.get(), 6, emb_text);
        bind(st.get(), 7, e.created_at);
        const int rc = sqlite3_step(st.get());
        if (rc != SQLITE_DONE) fail(rc, "write");
        if (sqlite3_changes(db_.get()) != 1) throw error(errc::store_error, "memory " + e.id + " not found in " + s.str());
    }

    std::string path_;
    sqlite_store_options opt_;
    mutable std::mutex mutex_;
    ania::detail::sqlite_db db_;
};

static_assert(memory_backend<sqlite_backend>);

} // namespace ania::memory
