// ania/memory/sqlite_backend-inl.hpp -- the definitions of <ania/memory/sqlite_backend.hpp>.
// Header-only mode includes this from there; compiled mode compiles it once, in the library (see
// <ania/detail/linkage.hpp>).
// SPDX-License-Identifier: MIT
#pragma once

#include <ania/detail/linkage.hpp>
#if !ANIA_HEADER_ONLY && !defined(ANIA_BUILDING_LIBRARY)
static_assert(false, "compiled mode: the library defines what <ania/memory/sqlite_backend-inl.hpp> defines; include <ania/memory/sqlite_backend.hpp>");
#endif

#include <ania/json.hpp>
#include <ania/memory/sqlite_backend.hpp>

namespace ania::memory {

ANIA_INLINE sqlite_backend::sqlite_backend(std::string path, sqlite_backend_options opt)
    : db_(std::move(path), opt, detail::memory_schema, "memory sqlite_backend") {}

ANIA_INLINE auto sqlite_backend::enabled() const noexcept -> bool {
    std::lock_guard lock(mutex_);
    return db_.enabled();
}

ANIA_INLINE auto sqlite_backend::load(const scope& s) const -> std::vector<entry> {
    std::lock_guard lock(mutex_);
    std::vector<entry> out;
    if (!db_.ready()) return out;
    ania::detail::sqlite_use st(
        db_.statement("SELECT id, user_id, content, tags, emb, created_at FROM ania_memory WHERE scope = ?1 ORDER BY created_at, id"));
    bind(st, 1, s.str());
    int rc;
    while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
        entry e;
        e.id = text::repair_utf8(column(st, 0));
        e.user_id = text::repair_utf8(column(st, 1));
        e.content = text::repair_utf8(column(st, 2));
        e.created_at = column(st, 5);
        if (const std::string bad = detail::decode_columns(column(st, 3), column(st, 4), e); !bad.empty())
            log_to(db_.options().log, log_level::warn, "memory: malformed tags or emb of " + text::quote_for_message(e.id) +
                                                           " in " + s.str() + " ignored: " + bad);
        out.push_back(std::move(e));
    }
    if (rc != SQLITE_DONE) db_.fail(rc, "load");
    return out;
}

ANIA_INLINE auto sqlite_backend::scopes() const -> std::vector<std::string> {
    std::lock_guard lock(mutex_);
    std::vector<std::string> out;
    if (!db_.ready()) return out;
    ania::detail::sqlite_use st(db_.statement("SELECT DISTINCT scope FROM ania_memory ORDER BY scope"));
    int rc;
    while ((rc = sqlite3_step(st)) == SQLITE_ROW) out.emplace_back(column(st, 0));
    if (rc != SQLITE_DONE) db_.fail(rc, "scopes");
    return out;
}

ANIA_INLINE auto sqlite_backend::version(const scope& s) const -> std::uint64_t {
    std::lock_guard lock(mutex_);
    if (!db_.ready()) return 0;
    return version_locked(s);
}

ANIA_INLINE auto sqlite_backend::history(const scope& s, std::string_view id) const -> std::vector<memory_version> {
    std::lock_guard lock(mutex_);
    std::vector<memory_version> out;
    if (!db_.ready()) return out;
    ania::detail::sqlite_use st(db_.statement("SELECT seq, kind, actor, session, tool_call_id, at, user_id, content, tags "
                                              "FROM ania_memory_history WHERE scope = ?1 AND id = ?2 ORDER BY seq"));
    bind(st, 1, s.str());
    bind(st, 2, id);
    int rc;
    while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
        memory_version v;
        v.seq = static_cast<std::uint64_t>(sqlite3_column_int64(st, 0));
        v.kind = change_kind_from(column(st, 1)).value_or(change_kind::updated);  // a kind of a later version
        v.origin.actor = text::repair_utf8(column(st, 2));
        v.origin.session = text::repair_utf8(column(st, 3));
        v.origin.tool_call_id = text::repair_utf8(column(st, 4));
        v.at = text::repair_utf8(column(st, 5));
        v.user_id = text::repair_utf8(column(st, 6));
        v.content = text::repair_utf8(column(st, 7));
        entry tags_only;
        if (const std::string bad = detail::decode_columns(column(st, 8), "[]", tags_only); !bad.empty())
            log_to(db_.options().log, log_level::warn, "memory: malformed tags of a version of " + text::quote_for_message(id) + " ignored: " + bad);
        v.tags = std::move(tags_only.tags);
        out.push_back(std::move(v));
    }
    if (rc != SQLITE_DONE) db_.fail(rc, "history");
    return out;
}

ANIA_INLINE auto sqlite_backend::record_locked(const scope& s, std::string_view id, const version_note& n) -> void {
    std::int64_t last = 0;
    {
        ania::detail::sqlite_use st(db_.statement("SELECT COALESCE(MAX(seq), 0) FROM ania_memory_history WHERE scope = ?1 AND id = ?2"));
        bind(st, 1, s.str());
        bind(st, 2, id);
        const int rc = sqlite3_step(st);
        if (rc != SQLITE_ROW) db_.fail(rc, "history");
        last = sqlite3_column_int64(st, 0);
    }
    const auto put = [&](const memory_version& v, std::int64_t seq) {
        json tags = json::array();
        for (const auto& t : v.tags) tags.push_back(t);
        const std::string tags_text = tags.dump(-1, ' ', false, json::error_handler_t::replace);
        ania::detail::sqlite_use st(db_.statement(
            "INSERT INTO ania_memory_history(scope, id, seq, kind, actor, session, tool_call_id, at, user_id, content, tags) "
            "VALUES(?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11)"));
        bind(st, 1, s.str());
        bind(st, 2, id);
        sqlite3_bind_int64(st, 3, seq);
        bind(st, 4, to_string(v.kind));
        bind(st, 5, v.origin.actor);
        bind(st, 6, v.origin.session);
        bind(st, 7, v.origin.tool_call_id);
        bind(st, 8, v.at);
        bind(st, 9, v.user_id);
        bind(st, 10, v.content);
        bind(st, 11, tags_text);
        const int rc = sqlite3_step(st);
        if (rc != SQLITE_DONE) db_.fail(rc, "record a version");
    };
    if (last == 0 && n.previous) put(n.baseline(), ++last);
    put(n.version, ++last);
    ania::detail::sqlite_use st(db_.statement("DELETE FROM ania_memory_history WHERE scope = ?1 AND id = ?2 AND seq <= ?3"));
    bind(st, 1, s.str());
    bind(st, 2, id);
    sqlite3_bind_int64(st, 3, last - static_cast<std::int64_t>(n.keep));
    const int rc = sqlite3_step(st);
    if (rc != SQLITE_DONE) db_.fail(rc, "drop old versions");
}

ANIA_INLINE auto sqlite_backend::version_locked(const scope& s) const -> std::uint64_t {
    ania::detail::sqlite_use st(db_.statement("SELECT version FROM ania_memory_version WHERE scope = ?1"));
    bind(st, 1, s.str());
    const int rc = sqlite3_step(st);
    if (rc == SQLITE_ROW) return static_cast<std::uint64_t>(sqlite3_column_int64(st, 0));
    if (rc != SQLITE_DONE) db_.fail(rc, "version");
    return 0;
}

ANIA_INLINE auto sqlite_backend::write(const char* sql, const scope& s, const entry* e, std::string_view id,
                                       std::optional<std::uint64_t> expected, const version_note* note) -> std::optional<std::uint64_t> {
    std::string tags_text, emb_text;
    if (e) {  // outside the lock
        json tags = json::array();
        for (const auto& t : e->tags) tags.push_back(t);
        json emb = json::array();
        for (const float x : e->embedding) emb.push_back(x);
        tags_text = tags.dump(-1, ' ', false, json::error_handler_t::replace);
        emb_text = emb.dump();
    }
    std::lock_guard lock(mutex_);
    if (!db_.ready()) return std::uint64_t{0};
    ania::detail::sqlite_transaction txn(db_, "memory write");
    if (expected && version_locked(s) != *expected) {
        txn.rollback();
        return std::nullopt;
    }
    int changed = 0;
    {
        ania::detail::sqlite_use st(db_.statement(sql));
        bind(st, 1, s.str());
        bind(st, 2, id);
        if (e) {
            bind(st, 3, e->user_id);
            bind(st, 4, e->content);
            bind(st, 5, tags_text);
            bind(st, 6, emb_text);
            bind(st, 7, e->created_at);
        }
        const int rc = sqlite3_step(st);
        if (rc != SQLITE_DONE) db_.fail(rc, "write");
        changed = sqlite3_changes(db_.get());
        if (e && changed != 1) throw error(errc::store_error, "memory " + e->id + " not found in " + s.str());
    }
    if (note && changed == 1) record_locked(s, id, *note);
    std::uint64_t v = 0;
    {
        ania::detail::sqlite_use st(db_.statement("INSERT INTO ania_memory_version(scope, version) VALUES(?1, 1) "
                                                  "ON CONFLICT(scope) DO UPDATE SET version = version + 1 RETURNING version"));
        bind(st, 1, s.str());
        const int rc = sqlite3_step(st);
        if (rc != SQLITE_ROW) db_.fail(rc, "version");
        v = static_cast<std::uint64_t>(sqlite3_column_int64(st, 0));
    }
    txn.commit();
    return v;
}

ANIA_INLINE sqlite_backend::~sqlite_backend() = default;

} // namespace ania::memory
