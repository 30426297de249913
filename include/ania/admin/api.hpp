// ania/admin/api.hpp -- the operator console's JSON API, apart from any HTTP server: a request in (method,
// path, query, body, the operator's address), a response out. admin/console.hpp serves it over HTTP; a test
// or another server can call it directly.
//
//   GET    /api/overview[?scope=g:1]                   {"scopes","scope","memories","sessions"}  the page's first
//                                                      view (the scope asked for, else the first one)
//   GET    /api/scopes                                 {"scopes":[...]}
//   GET    /api/memories?scope=g:1[&q=text]            {"scope","memories":[entry...]}  newest first; q: search
//   POST   /api/memories          {scope,content,user_id?,tags?}           201 entry
//   PUT    /api/memory?scope=&id= {content?,user_id?,tags?}                entry (last write wins; each kept as a version)
//   DELETE /api/memory?scope=&id=                                          {"deleted":id}
//   GET    /api/memory/history?scope=&id=              {"versions":[version...]} oldest first
//   POST   /api/memory/restore?scope=&id= {seq}                            entry
//   GET    /api/sessions                               {"sessions":[session...]}  most recently active first
//   GET    /api/session/history?session=&offset=&limit= {"total","offset","messages":[...]}
//   GET    /api/session/archive?session=&from=&limit=   {"first_seq","next_seq","messages","summaries"} (404: no archive)
//   GET    /api/session/turns?session=                 {"turns":[{at_ms,context_tokens,messages,compressed,ok}]}
//   POST   /api/session/evict?session=                 {"evicted":bool}  (false: not resident, or busy)
//   POST   /api/session/clear?session=                 {"cleared":session}
//
// Errors are {"error": "..."} with 400 (bad input: a scope or session not ^[gf]:\d+$, a wrong field type,
// invalid JSON), 404 (no such entry, version or route), 405, 409 (evict of a busy session is not an error:
// it says false), 500 (the store failed: its message). Every change is logged with the operator's address.
// Thread-safe: the views are (memory manager, session cache, store), and the API keeps no state of its own.
// SPDX-License-Identifier: MIT
#pragma once

#include <algorithm>
#include <charconv>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <ania/admin/views.hpp>
#include <ania/defaults.hpp>
#include <ania/error.hpp>
#include <ania/json.hpp>
#include <ania/log.hpp>
#include <ania/memory/scope.hpp>

namespace ania::admin {

struct request {
    std::string method;                            ///< "GET", "POST", "PUT", "DELETE"
    std::string path;                              ///< without the query
    std::multimap<std::string, std::string> query; ///< decoded
    std::string body;
    std::string remote;                            ///< the operator's address, for the change log
};

struct response {
    int status = 200;
    std::string body;  ///< JSON
};

class api {
public:
    explicit api(api_parts parts) : p_(std::move(parts)) {}

    [[nodiscard]] response handle(const request& r) const {
        try {
            return route(r);
        } catch (const error& e) {
            const int status = e.code() == errc::not_found                                         ? 404
                               : e.code() == errc::invalid_argument || e.code() == errc::parse_error ||
                                       e.code() == errc::limit_exceeded
                                   ? 400
                                   : 500;
            if (status == 500) log_to(p_.log, log_level::error, "admin: " + r.method + " " + r.path + ": " + e.what());
            return fail(status, e.what());
        } catch (const std::exception& e) {
            log_to(p_.log, log_level::error, "admin: " + r.method + " " + r.path + ": " + e.what());
            return fail(500, e.what());
        }
    }

    [[nodiscard]] static response fail(int status, std::string_view why) {
        return {status, dump(json{{"error", std::string(why)}})};
    }
    /// JSON text whatever bytes the data holds (invalid UTF-8 from a row another tool wrote becomes U+FFFD).
    [[nodiscard]] static std::string dump(const json& j) { return j.dump(-1, ' ', false, json::error_handler_t::replace); }

private:
    [[nodiscard]] response route(const request& r) const {
        const std::string_view path = r.path;
        const std::string_view m = r.method;
        if (path == "/api/overview") return only(m, "GET") ? overview(r) : not_allowed();
        if (path == "/api/scopes") return only(m, "GET") ? ok({{"scopes", mem().scopes()}}) : not_allowed();
        if (path == "/api/memories") {
            if (m == "GET") return list(r);
            if (m == "POST") return create(r);
            return not_allowed();
        }
        if (path == "/api/memory") {
            if (m == "PUT") return update(r);
            if (m == "DELETE") return remove(r);
            return not_allowed();
        }
        if (path == "/api/memory/history") return only(m, "GET") ? history(r) : not_allowed();
        if (path == "/api/memory/restore") return only(m, "POST") ? restore(r) : not_allowed();
        if (path == "/api/sessions") return only(m, "GET") ? resident() : not_allowed();
        if (path == "/api/session/history") return only(m, "GET") ? stored(r) : not_allowed();
        if (path == "/api/session/archive") return only(m, "GET") ? archived(r) : not_allowed();
        if (path == "/api/session/turns") return only(m, "GET") ? turns(r) : not_allowed();
        if (path == "/api/session/evict") return only(m, "POST") ? evict(r) : not_allowed();
        if (path == "/api/session/clear") return only(m, "POST") ? clear(r) : not_allowed();
        return fail(404, "no such route: " + std::string(path));
    }

    // ---- memory ----
    response list(const request& r) const {
        const std::string scope = scope_of(r);
        return ok({{"scope", scope}, {"memories", memories(scope, param(r, "q").value_or(""))}});
    }
    json memories(const std::string& scope, const std::string& q) const {
        json out = json::array();
        for (const memory::entry& e : mem().list(scope, q)) out.push_back(to_json(e));
        return out;
    }
    /// The page's first view in one round trip: the scopes, one scope's memories (the one asked for, else the
    /// first), the resident sessions; the parts this console has.
    response overview(const request& r) const {
        json out = json::object();
        if (p_.memory) {
            std::vector<std::string> scopes = mem().scopes();
            std::string scope = param(r, "scope").value_or("");
            if (!scope.empty()) (void)memory::scope::from(scope);  // validated as everywhere
            else if (!scopes.empty()) scope = scopes.front();
            out["memories"] = scope.empty() ? json::array() : memories(scope, "");
            out["scope"] = std::move(scope);
            out["scopes"] = std::move(scopes);
        }
        if (p_.sessions) out["sessions"] = sessions();
        return ok(std::move(out));
    }
    response create(const request& r) const {
        const json b = body_of(r);
        const std::string scope = field<std::string>(b, "scope").value_or("");
        (void)memory::scope::from(scope);  // validated before anything else is read
        const std::optional<std::string> content = field<std::string>(b, "content");
        if (!content) throw error(errc::invalid_argument, "content: required");
        memory::entry e = mem().create(scope, *content, field<std::string>(b, "user_id").value_or(""), tags_of(b).value_or(std::vector<std::string>{}));
        changed(r, "created", scope, e.id);
        return {201, dump(to_json(e))};
    }
    response update(const request& r) const {
        const std::string scope = scope_of(r);
        const std::string id = required(r, "id");
        const json b = body_of(r);
        const std::optional<std::string> content = field<std::string>(b, "content");
        const std::optional<std::string> user_id = field<std::string>(b, "user_id");
        memory::entry e = mem().update(scope, id, content ? std::optional<std::string_view>(*content) : std::nullopt,
                                       user_id ? std::optional<std::string_view>(*user_id) : std::nullopt, tags_of(b));
        changed(r, "updated", scope, id);
        return ok(to_json(e));
    }
    response remove(const request& r) const {
        const std::string scope = scope_of(r);
        const std::string id = required(r, "id");
        mem().remove(scope, id);
        changed(r, "deleted", scope, id);
        return ok({{"deleted", id}});
    }
    response history(const request& r) const {
        const std::string scope = scope_of(r);
        json out = json::array();
        for (const memory::memory_version& v : mem().history(scope, required(r, "id"))) out.push_back(to_json(v));
        return ok({{"versions", std::move(out)}});
    }
    response restore(const request& r) const {
        const std::string scope = scope_of(r);
        const std::string id = required(r, "id");
        const json b = body_of(r);
        const std::optional<std::int64_t> seq = field<std::int64_t>(b, "seq");
        if (!seq || *seq < 1) throw error(errc::invalid_argument, "seq: a version number >= 1 is required");
        memory::entry e = mem().restore(scope, id, static_cast<std::uint64_t>(*seq));
        changed(r, "restored version " + std::to_string(*seq) + " of", scope, id);
        return ok(to_json(e));
    }

    // ---- sessions ----
    response resident() const { return ok({{"sessions", sessions()}}); }
    json sessions() const {
        std::vector<session_info> all = ses().resident();
        std::sort(all.begin(), all.end(), [](const session_info& a, const session_info& b) { return a.idle < b.idle; });
        json out = json::array();
        for (const session_info& s : all) {
            using std::chrono::duration_cast;
            using ms = std::chrono::milliseconds;
            out.push_back({{"key", s.key},
                           {"idle_ms", duration_cast<ms>(s.idle).count()},
                           {"pending", s.pending},
                           {"responding", s.responding},
                           {"messages", s.messages},
                           {"bytes", s.bytes},
                           {"tokens", s.tokens},
                           {"since_compression_ms", s.since_compression ? json(duration_cast<ms>(*s.since_compression).count()) : json(nullptr)}});
        }
        return out;
    }
    response stored(const request& r) const {
        const std::string s = session_of(r);
        const history_page p = ses().stored(s, number(r, "offset", 0), std::min<std::size_t>(number(r, "limit", 50), defaults::admin_page_limit));
        return ok({{"session", s}, {"total", p.total}, {"offset", p.offset}, {"messages", ania::to_json(p.messages)}});
    }
    response archived(const request& r) const {
        const std::string s = session_of(r);
        const std::size_t from = number(r, "from", 0);  // a seq: past INT64_MAX the cast would read from the start
        if (from > static_cast<std::size_t>(std::numeric_limits<std::int64_t>::max())) throw error(errc::invalid_argument, "from: out of range");
        const std::optional<archive_slice> a =
            ses().archive(s, static_cast<std::int64_t>(from), std::min<std::size_t>(number(r, "limit", 50), defaults::admin_page_limit));
        if (!a) return fail(404, "this bot's store keeps no archive");
        json msgs = json::array(), sums = json::array();
        for (const archived_message& m : a->messages) msgs.push_back({{"seq", m.seq}, {"archived_at", m.archived_at}, {"message", ania::to_json(m.msg)}});
        for (const archive_summary& x : a->summaries)
            sums.push_back({{"first_seq", x.first_seq}, {"count", x.count}, {"summary", x.summary}, {"archived_at", x.archived_at}});
        return ok({{"session", s}, {"first_seq", a->first_seq}, {"next_seq", a->next_seq}, {"messages", std::move(msgs)}, {"summaries", std::move(sums)}});
    }
    response turns(const request& r) const {
        const std::string s = session_of(r);
        json out = json::array();
        for (const turn_point& t : ses().turns(s))
            out.push_back({{"at_ms", t.at_ms}, {"context_tokens", t.context_tokens}, {"messages", t.messages}, {"compressed", t.compressed}, {"ok", t.ok}});
        return ok({{"session", s}, {"turns", std::move(out)}});
    }
    response evict(const request& r) const {
        const std::string s = session_of(r);
        const bool done = ses().evict(s);
        if (done) changed(r, "evicted", s, "");
        return ok({{"evicted", done}});
    }
    response clear(const request& r) const {
        const std::string s = session_of(r);
        ses().clear(s);
        changed(r, "cleared", s, "");
        return ok({{"cleared", s}});
    }

    // ---- helpers ----
    [[nodiscard]] static bool only(std::string_view m, std::string_view allowed) noexcept { return m == allowed; }
    [[nodiscard]] static response ok(const json& j) { return {200, dump(j)}; }
    [[nodiscard]] static response not_allowed() { return fail(405, "method not allowed"); }
    [[nodiscard]] memory_view& mem() const {
        if (!p_.memory) throw error(errc::not_found, "this console has no long-term memory");
        return *p_.memory;
    }
    [[nodiscard]] session_view& ses() const {
        if (!p_.sessions) throw error(errc::not_found, "this console has no sessions");
        return *p_.sessions;
    }
    void changed(const request& r, std::string_view what, std::string_view where, std::string_view id) const {
        log_to(p_.log, log_level::info,
               "admin: " + r.remote + " " + std::string(what) + " " + std::string(where) + (id.empty() ? "" : " " + text::quote_for_message(id)));
    }

    [[nodiscard]] static std::optional<std::string> param(const request& r, const char* name) {
        const auto it = r.query.find(name);
        return it == r.query.end() ? std::nullopt : std::optional<std::string>(it->second);
    }
    [[nodiscard]] static std::string required(const request& r, const char* name) {
        std::optional<std::string> v = param(r, name);
        if (!v || v->empty()) throw error(errc::invalid_argument, std::string(name) + ": required");
        return std::move(*v);
    }
    /// The scope parameter, validated (SPEC §4: ^[gf]:\d+$).
    [[nodiscard]] static std::string scope_of(const request& r) {
        std::string s = param(r, "scope").value_or("");
        (void)memory::scope::from(s);
        return s;
    }
    /// A session key: a bot's sessions are its scopes' keys ("g:<group>", "f:<user>"), checked the same way.
    [[nodiscard]] static std::string session_of(const request& r) {
        std::string s = param(r, "session").value_or("");
        if (!memory::scope::parse(s)) throw error(errc::invalid_argument, "invalid session " + text::quote_for_message(s) + R"( (must match ^[gf]:\d+$))");
        return s;
    }
    [[nodiscard]] static std::size_t number(const request& r, const char* name, std::size_t fallback) {
        const std::optional<std::string> v = param(r, name);
        if (!v) return fallback;
        std::size_t n = 0;
        const auto [end, ec] = std::from_chars(v->data(), v->data() + v->size(), n);
        if (ec != std::errc() || end != v->data() + v->size()) throw error(errc::invalid_argument, std::string(name) + ": not a number");
        return n;
    }
    [[nodiscard]] static json body_of(const request& r) {
        if (r.body.empty()) return json::object();
        json b = parse_json(r.body, parse_limits{defaults::admin_max_body, 16});
        if (!b.is_object()) throw error(errc::invalid_argument, "the body must be a JSON object");
        return b;
    }
    template <class T>
    [[nodiscard]] static std::optional<T> field(const json& b, const char* name) {
        const auto it = b.find(name);
        if (it == b.end() || it->is_null()) return std::nullopt;
        if constexpr (std::is_same_v<T, std::string>) {
            if (!it->is_string()) throw error(errc::invalid_argument, std::string(name) + ": must be a string");
        } else {
            if (!it->is_number_integer()) throw error(errc::invalid_argument, std::string(name) + ": must be an integer");
        }
        return it->template get<T>();
    }
    [[nodiscard]] static std::optional<std::vector<std::string>> tags_of(const json& b) {
        const auto it = b.find("tags");
        if (it == b.end() || it->is_null()) return std::nullopt;
        if (!it->is_array()) throw error(errc::invalid_argument, "tags: must be an array of strings");
        std::vector<std::string> out;
        for (const json& t : *it) {
            if (!t.is_string()) throw error(errc::invalid_argument, "tags: must be an array of strings");
            out.push_back(t.get<std::string>());
        }
        return out;
    }
    [[nodiscard]] static json to_json(const memory::entry& e) {
        return {{"id", e.id}, {"user_id", e.user_id}, {"content", e.content}, {"tags", e.tags}, {"created_at", e.created_at}};
    }
    [[nodiscard]] static json to_json(const memory::memory_version& v) {
        return {{"seq", v.seq},       {"kind", std::string(memory::to_string(v.kind))},
                {"actor", v.origin.actor}, {"session", v.origin.session},
                {"tool_call_id", v.origin.tool_call_id}, {"at", v.at},
                {"user_id", v.user_id}, {"content", v.content},
                {"tags", v.tags}};
    }
    api_parts p_;
};

} // namespace ania::admin
