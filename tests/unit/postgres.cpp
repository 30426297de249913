// tests/unit/postgres.cpp -- postgres_store against a real server: a throwaway cluster this program starts
// (tests/support/pg_cluster.hpp). The conformance kit; processes appending and compressing one session at
// once (fork); a server restart; hostile session ids; the password kept out of errors.
#include <catch2/catch.hpp>

#include <algorithm>
#include <atomic>
#include <functional>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include <csignal>
#include <optional>

#include <sys/wait.h>
#include <unistd.h>

#include <ania/config/postgres.hpp>
#include <ania/store/postgres_store.hpp>
#include <ania/testing/history_store.hpp>

#include "pg_cluster.hpp"

using ania::message;
using ania_test::pg_cluster;

namespace {

ania::postgres_store_options pg_options() {
    ania::postgres_store_options o;
    o.dsn = pg_cluster::get().dsn();
    o.transaction_pooling = pg_cluster::get().pooled();
    o.log = [](ania::log_level, std::string_view) {};
    return o;
}

/// A fresh, empty schema: the named tables of the last test dropped.
void drop(const char* tables) {
    ania::detail::pg_connection c(pg_options());
    c.exec_simple(std::string("DROP TABLE IF EXISTS ") + tables);
}
void drop_tables() {
    drop("ania_chat_message, ania_chat_session, ania_chat_quarantine, ania_chat_archive, ania_chat_archive_summary, "
         "ania_chat_archive_state");
}

std::int64_t count_rows(const std::string& sql) {
    ania::detail::pg_connection c(pg_options());
    const auto r = c.exec_simple(sql);
    return std::stoll(PQgetvalue(r.get(), 0, 0));
}

/// Runs `body` in `n` child processes at once (each with its own connections); true when all exited 0.
template <class F>
bool in_processes(int n, F body) {
    std::vector<pid_t> kids;
    for (int k = 0; k < n; ++k) {
        const pid_t pid = ::fork();
        if (pid == 0) {
            int rc = 1;
            try {
                rc = body(k) ? 0 : 1;
            } catch (const std::exception& e) {
                std::fprintf(stderr, "child %d: %s\n", k, e.what());
            }
            std::_Exit(rc);
        }
        kids.push_back(pid);
    }
    bool ok = true;
    for (const pid_t pid : kids) {
        int status = 0;
        ::waitpid(pid, &status, 0);
        ok = ok && WIFEXITED(status) && WEXITSTATUS(status) == 0;
    }
    return ok;
}

} // namespace

namespace ania::testing {
template <>
struct store_fixture<ania::postgres_store> {
    std::unique_ptr<ania::postgres_store> make() {
        drop_tables();
        return std::make_unique<ania::postgres_store>(pg_options());
    }
    std::unique_ptr<ania::postgres_store> reopen() { return std::make_unique<ania::postgres_store>(pg_options()); }
    std::unique_ptr<ania::postgres_store> make_archiving(const ania::archive_options& a) {
        drop_tables();
        ania::postgres_store_options o = pg_options();
        o.archive = a;
        return std::make_unique<ania::postgres_store>(o);
    }
};
template <>
struct store_capabilities<ania::postgres_store> : default_store_capabilities<ania::postgres_store> {
    static constexpr bool persists = true;
};
} // namespace ania::testing

using pg_stores = std::tuple<ania::postgres_store>;
ANIA_TEST_HISTORY_STORES(pg_stores)

TEST_CASE("postgres: 4 processes x 200 appends to one session: contiguous seq, nothing lost, turns whole", "[postgres][processes]") {
    drop_tables();
    { ania::postgres_store schema(pg_options()); }
    REQUIRE(in_processes(4, [](int k) {
        ania::postgres_store s(pg_options());
        for (int i = 0; i < 200; ++i) {
            const std::string tag = std::to_string(k) + ":" + std::to_string(i);
            const std::vector<message> turn{message::user("u " + tag), message::assistant("a " + tag)};
            s.append("g:shared", turn);
        }
        return true;
    }));
    ania::postgres_store s(pg_options());
    const auto all = s.load("g:shared");
    REQUIRE(all.size() == 1600);
    CHECK(count_rows("SELECT count(*) FROM ania_chat_message WHERE seq BETWEEN 0 AND 1599") == 1600);
    CHECK(s.version("g:shared").msg_count == 1600);
    std::vector<int> next(4, 0);
    for (std::size_t i = 0; i < all.size(); i += 2) {  // each turn's two messages adjacent, each process in order
        const std::string u = all[i].text(), a = all[i + 1].text();
        REQUIRE(u.rfind("u ", 0) == 0);
        REQUIRE(a == "a " + u.substr(2));
        const int k = u[2] - '0';
        CHECK(u == "u " + std::to_string(k) + ":" + std::to_string(next[k]++));
    }
    CHECK(next == std::vector<int>(4, 200));
}

TEST_CASE("postgres: 4 processes appending and compressing one session with replace_if lose no turn", "[postgres][processes]") {
    // Each process appends 60 turns; every 10th it "compresses": loads with the version, replaces the oldest
    // half by a summary naming the turns it covers, and commits only if the version is unchanged (else it
    // reloads and tries again). At the end every turn is either still there or named by a summary.
    drop_tables();
    { ania::postgres_store schema(pg_options()); }
    REQUIRE(in_processes(4, [](int k) {
        ania::postgres_store s(pg_options());
        for (int i = 0; i < 60; ++i) {
            const std::vector<message> turn{message::user("t " + std::to_string(k) + ":" + std::to_string(i))};
            s.append("g:cas", turn);
            if (i % 10 != 9) continue;
            for (int attempt = 0; attempt < 100; ++attempt) {
                auto h = s.load_versioned("g:cas");
                const std::size_t half = h.messages.size() / 2;
                std::string covered = "summary";
                for (std::size_t j = 0; j < half; ++j) covered += "|" + h.messages[j].text();
                std::vector<message> next{message::user(covered)};
                next.insert(next.end(), h.messages.begin() + static_cast<std::ptrdiff_t>(half), h.messages.end());
                if (s.replace_if("g:cas", next, h.version) == ania::replace_status::replaced) break;
            }
        }
        return true;
    }));
    ania::postgres_store s(pg_options());
    std::set<std::string> seen;
    std::function<void(const std::string&)> collect = [&](const std::string& text) {
        if (text.rfind("summary", 0) != 0) {
            seen.insert(text);
            return;
        }
        std::size_t at = text.find('|');
        while (at != std::string::npos) {
            const std::size_t end = text.find('|', at + 1);
            const std::string part = text.substr(at + 1, end == std::string::npos ? std::string::npos : end - at - 1);
            if (part.rfind("t ", 0) == 0) seen.insert(part);
            at = end;
        }
    };
    for (const message& m : s.load("g:cas")) collect(m.text());
    CHECK(seen.size() == 240);  // 4 x 60 distinct turns, none lost
}

TEST_CASE("postgres: replace_if refuses a stale version; load_versioned sees one snapshot", "[postgres]") {
    drop_tables();
    ania::postgres_store s(pg_options());
    const std::vector<message> one{message::user("1")}, two{message::user("2")};
    s.append("f:1", one);
    const auto h = s.load_versioned("f:1");
    CHECK(h.version.msg_count == 1);
    s.append("f:1", two);  // another writer appended meanwhile
    CHECK(s.replace_if("f:1", one, h.version) == ania::replace_status::conflict);
    CHECK(s.load("f:1").size() == 2);  // nothing written
    const auto h2 = s.load_versioned("f:1");
    CHECK(s.replace_if("f:1", one, h2.version) == ania::replace_status::replaced);
    CHECK(s.load("f:1").size() == 1);
    const auto h3 = s.load_versioned("f:1");
    CHECK(h3.version.epoch == h2.version.epoch + 1);
    s.drop_front("f:1", 1);  // not an append: a later CAS on h3 must fail
    CHECK(s.replace_if("f:1", two, h3.version) == ania::replace_status::conflict);
    s.clear("f:1");
    CHECK(s.load("f:1").empty());
}

TEST_CASE("postgres: hostile session ids round-trip and stay apart", "[postgres]") {
    drop_tables();
    ania::postgres_store s(pg_options());
    using namespace std::string_literals;
    const std::vector<std::string> ids{"g:1"s, "g:1\0x"s, "\xff\xfe"s, "'; DROP TABLE ania_chat_message; --"s, std::string(10000, 'k'), ""s};
    for (std::size_t i = 0; i < ids.size(); ++i) {
        const std::vector<message> m{message::user("m" + std::to_string(i))};
        s.append(ids[i], m);
    }
    for (std::size_t i = 0; i < ids.size(); ++i) {
        const auto back = s.load(ids[i]);
        REQUIRE(back.size() == 1);
        CHECK(back[0].text() == "m" + std::to_string(i));
    }
}

TEST_CASE("postgres: the server restarted mid-run: the call in flight fails cleanly, the next one works", "[postgres]") {
    drop_tables();
    ania::postgres_store s(pg_options());
    const std::vector<message> turn{message::user("before")};
    s.append("f:r", turn);
    pg_cluster::get().restart();
    try {
        s.append("f:r", turn);  // the pooled connection is gone: store_io, or a fresh connection already
    } catch (const ania::error& e) {
        CHECK(e.code() == ania::errc::store_io);
    }
    const std::vector<message> after{message::user("after")};
    s.append("f:r", after);
    const auto back = s.load("f:r");
    REQUIRE(back.size() >= 2);
    CHECK(back.back().text() == "after");
}

TEST_CASE("postgres: an unreachable server is a clear error without the password; an unreadable row is quarantined", "[postgres]") {
    ania::postgres_store_options o;
    o.dsn = "host=/nonexistent-ania dbname=x user=u password=hunter2-secret connect_timeout=1";
    try {
        ania::postgres_store s(o);
        FAIL("connected to nothing");
    } catch (const ania::error& e) {
        CHECK(e.code() == ania::errc::store_io);
        CHECK(std::string(e.what()).find("hunter2-secret") == std::string::npos);
    }
    CHECK(ania::detail::pg_redact("x password=abc123 y", "host=h password=abc123") == "x password=[redacted] y");

    drop_tables();
    ania::postgres_store s(pg_options());
    const std::vector<message> turn{message::user("ok 1"), message::user("ok 2")};
    s.append("f:q", turn);
    {
        ania::detail::pg_connection c(pg_options());
        c.exec_simple("UPDATE ania_chat_message SET content = '{not a message' WHERE seq = 0");
    }
    const auto back = s.load("f:q");  // the bad row is skipped, not fatal
    REQUIRE(back.size() == 1);
    s.replace("f:q", back);  // ...and kept aside, not deleted silently
    CHECK(count_rows("SELECT count(*) FROM ania_chat_quarantine WHERE content = '{not a message'") == 1);
}

// ---- leases ------------------------------------------------------------------------------------------

TEST_CASE("postgres lease: two processes, one session, never both inside a turn", "[postgres][lease][processes]") {
    // Each process takes the session 40 times; inside, it writes "begin k", waits, writes "end k", lets go.
    // The history must be begin/end pairs of one process each: no turn of one inside a turn of the other.
    drop_tables();
    { ania::postgres_store schema(pg_options()); }
    REQUIRE(in_processes(2, [](int k) {
        ania::postgres_store s(pg_options());
        for (int i = 0; i < 40; ++i) {
            std::optional<ania::session_lease> l;
            for (int spin = 0; spin < 20000 && !(l = s.try_lease("g:lease", std::chrono::seconds(10))); ++spin) ::usleep(200);
            if (!l) return false;
            const std::vector<message> b{message::user("begin " + std::to_string(k))}, e{message::user("end " + std::to_string(k))};
            s.append("g:lease", b);
            ::usleep(1000);
            s.append("g:lease", e);
            s.release(*l);
        }
        return true;
    }));
    ania::postgres_store s(pg_options());
    const auto h = s.load("g:lease");
    REQUIRE(h.size() == 160);
    for (std::size_t i = 0; i < h.size(); i += 2) {
        REQUIRE(h[i].text().rfind("begin ", 0) == 0);
        CHECK(h[i + 1].text() == "end " + h[i].text().substr(6));
    }
}

TEST_CASE("postgres lease: a killed holder (kill -9) keeps it only until its TTL", "[postgres][lease][processes]") {
    drop_tables();
    ania::postgres_store s(pg_options());
    int ready[2];
    REQUIRE(::pipe(ready) == 0);
    const pid_t pid = ::fork();
    if (pid == 0) {
        ania::postgres_store mine(pg_options());
        const auto l = mine.try_lease("f:kill", std::chrono::milliseconds(800));
        const char c = l ? 'y' : 'n';
        (void)::write(ready[1], &c, 1);
        ::pause();  // until killed
        std::_Exit(0);
    }
    char c = 0;
    REQUIRE(::read(ready[0], &c, 1) == 1);
    REQUIRE(c == 'y');
    ::kill(pid, SIGKILL);
    ::waitpid(pid, nullptr, 0);
    CHECK_FALSE(s.try_lease("f:kill", std::chrono::seconds(5)));  // still held by the dead process's lease
    std::optional<ania::session_lease> l;
    const auto t0 = std::chrono::steady_clock::now();
    while (!(l = s.try_lease("f:kill", std::chrono::seconds(5))) && std::chrono::steady_clock::now() - t0 < std::chrono::seconds(10))
        ::usleep(20000);
    REQUIRE(l);
    CHECK(l->epoch == 2);  // a new owner: a new epoch
    ::close(ready[0]);
    ::close(ready[1]);
}

TEST_CASE("postgres lease: a holder paused (SIGSTOP) past its TTL is fenced off when it resumes", "[postgres][lease][processes]") {
    drop_tables();
    ania::postgres_store s(pg_options());
    int ready[2];
    REQUIRE(::pipe(ready) == 0);
    const pid_t pid = ::fork();
    if (pid == 0) {
        int rc = 3;
        try {
            ania::postgres_store mine(pg_options());
            const auto l = mine.try_lease("f:pause", std::chrono::milliseconds(300));
            const char c = l ? 'y' : 'n';
            (void)::write(ready[1], &c, 1);
            ::usleep(1'500'000);  // stopped in here, resumed after another process took the session
            const std::vector<message> late{message::user("late write from the paused process")};
            try {
                mine.append("f:pause", late);
                rc = 1;  // accepted: the fence failed
            } catch (const ania::error& e) {
                rc = e.code() == ania::errc::stale_writer ? 0 : 2;
            }
            try {
                mine.replace("f:pause", late);
                rc = rc == 0 ? 1 : rc;
            } catch (const ania::error& e) {
                if (e.code() != ania::errc::stale_writer) rc = 2;
            }
            if (mine.renew(*l)) rc = 4;  // the lease is gone
        } catch (...) {
        }
        std::_Exit(rc);
    }
    char c = 0;
    REQUIRE(::read(ready[0], &c, 1) == 1);
    REQUIRE(c == 'y');
    ::kill(pid, SIGSTOP);
    ::usleep(600'000);  // past its TTL
    const auto l = s.try_lease("f:pause", std::chrono::seconds(10));
    REQUIRE(l);
    const std::vector<message> mine{message::user("the new owner's turn")};
    s.append("f:pause", mine);
    ::kill(pid, SIGCONT);
    int status = 0;
    ::waitpid(pid, &status, 0);
    REQUIRE(WIFEXITED(status));
    CHECK(WEXITSTATUS(status) == 0);  // both writes of the resumed process were rejected as stale
    const auto h = s.load("f:pause");
    REQUIRE(h.size() == 1);  // 0 interleaved turns
    CHECK(h[0].text() == "the new owner's turn");
    s.release(*l);
    CHECK(s.try_lease("f:pause", std::chrono::seconds(1)));  // released: free again, at once
    ::close(ready[0]);
    ::close(ready[1]);
}

// ---- the session cache over leases ---------------------------------------------------------------------

#include <ania/agent/agent.hpp>
#include <ania/agent/traits.hpp>
#include <ania/session/postgres_leases.hpp>

namespace {
/// SCRIPTED model: answers with how many user messages the request holds, i.e. how many turns it sees.
struct counting_client {
    ania::completion complete(const ania::chat_request& req) {
        int users = 0;
        for (const message& m : req.messages) users += m.role == ania::role::user ? 1 : 0;
        return ania::completion::success(message::assistant("n=" + std::to_string(users)), {10, 1, 11, {}});
    }
};
struct pg_traits : ania::default_agent_traits {
    using client = counting_client;
    using store = ania::postgres_store;
};
using pg_agent = ania::basic_agent<pg_traits>;
} // namespace

TEST_CASE("postgres leases: two processes' session caches answer one session in turn, each seeing every turn", "[postgres][lease][processes]") {
    // Both processes answer 20 messages of one session. Each turn must see all the turns before it, whichever
    // process answered them (the resident agent is rebuilt when the other process answered meanwhile), and no
    // two turns may interleave: the replies count 1, 2, ..., 40 in store order.
    drop_tables();
    { ania::postgres_store schema(pg_options()); }
    REQUIRE(in_processes(2, [](int k) {
        ania::postgres_store store(pg_options());
        ania::background_writer<ania::postgres_store> writer(store);
        ania::postgres_session_leases leases(store, std::chrono::seconds(5), [](ania::log_level, std::string_view) {});
        ania::session_options o;
        o.janitor = false;
        o.lease = leases.hooks(std::chrono::seconds(30));
        o.log = [](ania::log_level, std::string_view) {};
        ania::session_cache<pg_agent> cache(
            [&](const std::string& key) {
                return std::make_unique<pg_agent>(writer, pg_agent::parts{.client = {}},
                                                  key, ania::agent_options{.window = {.max_context_tokens = 0}});
            },
            o);
        for (int i = 0; i < 20; ++i) {
            const auto r = cache.respond("g:multi", "hello from " + std::to_string(k));
            if (r.status != ania::respond_status::replied || r.turns.size() != 1 || !r.turns[0].ok()) return false;
            ::usleep(static_cast<useconds_t>(500 + 700 * k));
        }
        writer.flush();
        return leases.held() == 0;
    }));
    ania::postgres_store s(pg_options());
    const auto h = s.load("g:multi");
    REQUIRE(h.size() == 80);
    for (std::size_t i = 0; i < h.size(); i += 2) {
        CHECK(h[i].role == ania::role::user);
        CHECK(h[i + 1].text() == "n=" + std::to_string(i / 2 + 1));
    }
}

TEST_CASE("postgres leases: a session held by another process is handed over after the wait", "[postgres][lease]") {
    drop_tables();
    ania::postgres_store other(pg_options());
    const auto held = other.try_lease("g:busy", std::chrono::seconds(30));  // "another process"
    REQUIRE(held);
    ania::postgres_store store(pg_options());
    ania::background_writer<ania::postgres_store> writer(store);
    ania::postgres_session_leases leases(store, std::chrono::seconds(5), [](ania::log_level, std::string_view) {});
    ania::session_options o;
    o.janitor = false;
    o.lease = leases.hooks(std::chrono::milliseconds(100));
    o.log = [](ania::log_level, std::string_view) {};
    ania::session_cache<pg_agent> cache(
        [&](const std::string& key) { return std::make_unique<pg_agent>(writer, pg_agent::parts{.client = {}}, key); }, o);
    const auto r = cache.respond("g:busy", "anyone?");
    CHECK(r.status == ania::respond_status::elsewhere);
    REQUIRE(r.handed_over.size() == 1);
    CHECK(r.handed_over[0].text == "anyone?");
    CHECK(r.turns.empty());
    CHECK(cache.pending("g:busy") == 0);
    other.release(*held);
    const auto again = cache.respond("g:busy", "now?");
    CHECK(again.status == ania::respond_status::replied);
}

// ---- long-term memory on PostgreSQL ------------------------------------------------------------------

#include <ania/memory/manager.hpp>
#include <ania/memory/postgres_backend.hpp>
#include <ania/testing/memory_backend.hpp>

namespace {
ania::postgres_options memory_options() { return pg_options(); }  // the connection part of the store's options
void drop_memory_tables() { drop("ania_memory, ania_memory_version, ania_memory_history"); }
} // namespace

namespace ania::testing {
template <>
struct memory_backend_fixture<ania::memory::postgres_backend> {
    std::unique_ptr<ania::memory::postgres_backend> make() {
        drop_memory_tables();
        return std::make_unique<ania::memory::postgres_backend>(memory_options());
    }
    std::unique_ptr<ania::memory::postgres_backend> reopen() { return std::make_unique<ania::memory::postgres_backend>(memory_options()); }
};
} // namespace ania::testing

using pg_memory_backends = std::tuple<ania::memory::postgres_backend>;
ANIA_TEST_MEMORY_BACKENDS(pg_memory_backends)
// SPEC §4's rules and the golden dedup and search results, through a manager on PostgreSQL.
using memory_rule_backends = pg_memory_backends;
#include "memory_rules.hpp"

TEST_CASE("postgres memory: a memory saved in process A is found by process B at once; scopes stay apart", "[postgres][memory][processes]") {
    drop_memory_tables();
    ania::memory::postgres_backend backend(memory_options());
    REQUIRE(backend.enabled());
    ania::memory::postgres_manager b(backend);  // "process B": its index of the scope is built now, empty
    const auto group = ania::memory::scope::from("g:100001");
    CHECK(b.search(group, "美式咖啡").empty());
    REQUIRE(in_processes(1, [&](int) {  // "process A", with its own backend and connections
        ania::memory::postgres_backend mine(memory_options());
        ania::memory::postgres_manager a(mine);
        return a.save(group, "小明喜欢喝美式咖啡，不加糖", "qq:1").status == ania::memory::save_status::saved;
    }));
    const auto hits = b.search(group, "美式咖啡");  // the version changed: B reloads the scope before searching
    REQUIRE(hits.size() == 1);
    CHECK(hits[0].item.content == "小明喜欢喝美式咖啡，不加糖");
    CHECK(b.search(ania::memory::scope::from("g:100002"), "美式咖啡").empty());
    // The same fact saved again by B is an exact duplicate of A's: dedup sees the other process's rows.
    CHECK(b.save(group, "小明喜欢喝美式咖啡，不加糖", "qq:1").status == ania::memory::save_status::exact_duplicate);
}

TEST_CASE("postgres memory: an unreachable server disables the memory feature, logged", "[postgres][memory]") {
    ania::postgres_options o;
    o.dsn = "host=/nonexistent-ania dbname=x connect_timeout=1";
    std::vector<std::string> lines;
    o.log = [&](ania::log_level, std::string_view t) { lines.emplace_back(t); };
    ania::memory::postgres_backend b(o);
    CHECK_FALSE(b.enabled());
    CHECK(b.load(ania::memory::scope::from("g:1")).empty());
    REQUIRE(lines.size() == 1);
    CHECK(lines[0].find("disabled") != std::string::npos);
}

TEST_CASE("postgres: compaction keeps the turns appended while the summary was written", "[postgres]") {
    drop_tables();
    ania::postgres_store s(pg_options());
    std::vector<message> old;
    for (int i = 0; i < 6; ++i) old.push_back(message::user("old " + std::to_string(i)));
    s.append("g:c", old);
    const auto snap = s.load_versioned("g:c");  // summarise this, holding nothing
    const std::vector<message> during{message::user("arrived during the summary")};
    s.append("g:c", during);  // another process's turn meanwhile
    const std::vector<message> summary{message::user("summary of 6")};
    REQUIRE(s.replace_prefix_if("g:c", summary, snap.version) == ania::replace_status::replaced);
    const auto h = s.load("g:c");
    REQUIRE(h.size() == 2);
    CHECK(h[0].text() == "summary of 6");
    CHECK(h[1].text() == "arrived during the summary");
    const std::vector<message> next{message::user("next")};
    s.append("g:c", next);  // appends continue after the survivors
    CHECK(s.load("g:c").back().text() == "next");
    // A second compaction from the same snapshot, or one after a clear, conflicts: nothing is written.
    CHECK(s.replace_prefix_if("g:c", summary, snap.version) == ania::replace_status::conflict);
    const auto snap2 = s.load_versioned("g:c");
    s.clear("g:c");
    CHECK(s.replace_prefix_if("g:c", summary, snap2.version) == ania::replace_status::conflict);
    CHECK(s.load("g:c").empty());
}

TEST_CASE("postgres: postgres.* from the configuration", "[postgres][config]") {
    const ania::config c = ania::parse_config(R"({"postgres":{"dsn":"host=/run/postgresql dbname=bot","pool_size":8,"statement_timeout_ms":0}})");
    const auto o = ania::from_config<ania::postgres_options>(c);
    CHECK(o.dsn == "host=/run/postgresql dbname=bot");
    CHECK(o.pool_size == 8);
    CHECK(o.statement_timeout.count() == 0);
    CHECK_THROWS_WITH(ania::parse_config(R"({"postgres":{"pool_size":0}})"), Catch::Contains("postgres.pool_size"));
}

TEST_CASE("postgres: two store objects over one session, and a clear during a summarise", "[postgres]") {
    drop_tables();
    ania::postgres_store a(pg_options()), b(pg_options());
    const std::vector<message> one{message::user("from a")}, two{message::user("from b")};
    a.append("f:two", one);
    b.append("f:two", two);
    const auto seen_a = a.load("f:two"), seen_b = b.load("f:two");
    REQUIRE(seen_a.size() == 2);
    CHECK(seen_a == seen_b);  // no per-object cache: both read the database
    const auto snap = a.load_versioned("f:two");  // a starts summarising ...
    b.clear("f:two");                             // ... b clears the session meanwhile
    const std::vector<message> summary{message::user("summary")};
    CHECK(a.replace_if("f:two", summary, snap.version) == ania::replace_status::conflict);
    CHECK(a.replace_prefix_if("f:two", summary, snap.version) == ania::replace_status::conflict);
    CHECK(b.load("f:two").empty());  // the clear stands: the summary did not bring the history back
}

TEST_CASE("postgres: the statement timeout bounds every statement, in a transaction or not, pooled or not", "[postgres]") {
    for (const bool pooling : {false, true}) {
        INFO("transaction_pooling " << pooling);
        auto o = pg_options();
        o.statement_timeout = std::chrono::milliseconds(150);
        o.transaction_pooling = pooling || pg_cluster::get().pooled();
        ania::detail::pg_connection c(o);
        const ania::detail::pg_params none;
        CHECK(std::string(PQgetvalue(c.exec("SHOW statement_timeout", none, "show").get(), 0, 0)) == "150ms");
        CHECK_THROWS_WITH(c.exec("SELECT pg_sleep(2)", none, "sleep"), Catch::Contains("57014"));  // query_canceled
        CHECK_THROWS_WITH(c.exec_simple("SELECT pg_sleep(2)", "sleep"), Catch::Contains("57014"));
        {
            ania::detail::pg_transaction t(c, "begin");
            CHECK(std::string(PQgetvalue(c.exec("SHOW statement_timeout", none, "show").get(), 0, 0)) == "150ms");
            CHECK_THROWS_WITH(c.exec("SELECT pg_sleep(2)", none, "sleep"), Catch::Contains("57014"));
        }
        CHECK(c.ok());  // a timeout is not a broken connection: the next statement works
        CHECK(std::string(PQgetvalue(c.exec_simple("SELECT 41 + 1").get(), 0, 0)) == "42");
    }
    const auto parsed = ania::from_config<ania::postgres_options>(ania::parse_config(R"({"postgres":{"transaction_pooling":true}})"));
    CHECK(parsed.transaction_pooling);
    CHECK_FALSE(ania::from_config<ania::postgres_options>(ania::config{}).transaction_pooling);
}
