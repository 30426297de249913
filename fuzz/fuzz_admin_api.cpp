// fuzz/fuzz_admin_api.cpp -- the operator console's JSON API (admin::api, without HTTP) with arbitrary requests,
// against one memory manager and a stored history: every answer is JSON with a status the API documents; bad
// input is a 4xx that says why, never a 500 (the RAM backend and store cannot fail, so a 500 is an exception the
// API did not expect); the scope cap holds. State carries over between inputs, as an operator's edits do.
//
// Input: byte 0 the method, byte 1 the route; then the query ("k=v&k=v", taken as decoded), a newline, the body.
#include <array>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include <ania/admin/api.hpp>
#include <ania/memory/manager.hpp>
#include <ania/store/ram_store.hpp>

#include "fuzz.hpp"

namespace {

/// The session cache's side of the view, in memory: which sessions are resident, what evict and clear did.
/// The stored history is the real ram_store behind the real session_view_of.
struct resident_sessions {
    ania::ram_store* store;
    std::vector<ania::session_info> snapshot() const {
        ania::session_info i;
        i.key = "g:1";
        i.messages = store->load("g:1").size();
        return {i};
    }
    bool evict(std::string_view key) const { return key == "g:1"; }
    void clear(std::string_view key) const { store->clear(key); }
};

struct harness {
    ania::memory::ram_backend backend;
    ania::memory::manager manager;
    ania::ram_store store;
    resident_sessions sessions{&store};
    ania::admin::turn_log turns;
    ania::admin::memory_view_of<ania::memory::manager> memory{manager};
    ania::admin::session_view_of<resident_sessions, ania::ram_store> session{sessions, store, &turns};
    ania::admin::api api{{.memory = &memory, .sessions = &session, .log = {}}};
    harness()
        : manager(backend, [] {
              ania::memory::manager_options o;
              o.log = [](ania::log_level, std::string_view) {};
              o.max_entries = 20;
              o.seed = 1;
              return o;
          }()) {
        const ania::memory::scope g1 = ania::memory::scope::from("g:1");
        for (int i = 0; i < 3; ++i) (void)manager.save(g1, "seed " + std::to_string(i), "qq:1", {"seed"});
        const std::vector<ania::message> history{ania::message::user("你好"), ania::message::assistant("hi")};
        store.append("g:1", history);
    }
};

constexpr std::array<std::string_view, 4> methods{"GET", "POST", "PUT", "DELETE"};
constexpr std::array<std::string_view, 15> routes{
    "/api/overview",        "/api/scopes",          "/api/memories",       "/api/memory",        "/api/memory/history",
    "/api/memory/restore",  "/api/sessions",        "/api/session/history", "/api/session/archive", "/api/session/turns",
    "/api/session/evict",   "/api/session/clear",   "/api/nothing",        "/",                  "/api/memory/"};

std::multimap<std::string, std::string> query_of(std::string_view q) {
    std::multimap<std::string, std::string> out;
    while (!q.empty()) {
        const std::size_t amp = q.find('&');
        const std::string_view pair = q.substr(0, amp);
        const std::size_t eq = pair.find('=');
        out.emplace(std::string(pair.substr(0, eq)), eq == std::string_view::npos ? std::string() : std::string(pair.substr(eq + 1)));
        if (amp == std::string_view::npos) break;
        q.remove_prefix(amp + 1);
    }
    return out;
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    static harness h;
    if (size < 2) return 0;
    const std::string_view rest = ania_fuzz::as_text(data + 2, size - 2);
    const std::size_t nl = rest.find('\n');
    ania::admin::request r;
    r.method = std::string(methods[data[0] % methods.size()]);
    r.path = std::string(routes[data[1] % routes.size()]);
    r.query = query_of(rest.substr(0, nl));
    if (nl != std::string_view::npos) r.body = std::string(rest.substr(nl + 1));
    r.remote = "127.0.0.1";
    const ania::admin::response a = h.api.handle(r);
    ANIA_FUZZ_CHECK(a.status == 200 || a.status == 201 || a.status == 400 || a.status == 404 || a.status == 405);
    ANIA_FUZZ_CHECK(ania::text::is_valid_utf8(a.body));
    const ania::json j = ania::json::parse(a.body);  // throws (and the fuzzer reports it) if the API wrote no JSON
    ANIA_FUZZ_CHECK(j.is_object());
    if (a.status >= 400) {
        const auto e = j.find("error");
        ANIA_FUZZ_CHECK(e != j.end() && e->is_string() && !e->get_ref<const std::string&>().empty());
    }
    for (const std::string& s : h.manager.scopes())
        ANIA_FUZZ_CHECK(h.manager.list(ania::memory::scope::from(s)).size() <= h.manager.options().max_entries);
    return 0;
}
