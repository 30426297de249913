// bench/postgres.cpp -- postgres_store on a throwaway local cluster (tests/support/pg_cluster.hpp: Unix
// socket, fsync off), each beside the same operation written with bare libpq, and beside SQLite. Fixed names:
//   pg_append_turn            one turn of 4 messages (JSON serialisation included), one statement
//   raw_pg_append_turn        the same statement with pre-serialised rows and arrays, bare libpq
//   raw_pg_append_turn/txn    what one writes by hand: BEGIN, SELECT ... FOR UPDATE, 4 INSERTs, UPDATE, COMMIT
//   pg_load/1000              a 1000-message session (JSON parsing included); raw_pg_load/1000 the same by hand
//   pg_append_turn/4proc      4 processes appending to distinct sessions at once: aggregate turns/s;
//                             raw_pg_append_turn/4proc the same by hand (serialising with ania::dump)
//   sqlite_append_turn/pg_set the SQLite store with synchronous=NORMAL on the same turns (for scale)
#include <benchmark/benchmark.h>

#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <memory>
#include <filesystem>
#include <string>
#include <vector>

#include <ania/json.hpp>
#include <ania/store/postgres_store.hpp>
#ifdef ANIA_BENCH_SQLITE
#include <ania/store/sqlite_store.hpp>
#endif

#include "bench_data.hpp"
#include "pg_cluster.hpp"

namespace {

const std::vector<ania::message>& history_1k() {
    static const auto h = [] {
        std::vector<ania::message> out;
        for (const auto& l : ania_test::load_lines("history_1k")) out.push_back(ania::parse_message(l));
        return out;
    }();
    return h;
}

ania::postgres_store_options pg() {
    ania::postgres_store_options o;
    o.dsn = ania_test::pg_cluster::get().dsn();
    return o;
}

void reset_tables() {
    ania::detail::pg_connection c(pg());
    c.exec_simple("DROP TABLE IF EXISTS ania_chat_message, ania_chat_session, ania_chat_quarantine");
}

void pg_append_turn(benchmark::State& state) {
    reset_tables();
    ania::postgres_store store(pg());
    const auto& h = history_1k();
    std::size_t i = 1;
    for (auto _ : state) {
        if (i + 4 > h.size()) i = 1;
        store.append("g:100001", std::span(h).subspan(i, 4));
        i += 4;
    }
}
BENCHMARK(pg_append_turn)->Name("pg_append_turn")->Unit(benchmark::kMicrosecond)->UseRealTime()->MinTime(2);

/// The turns of history_1k as the two text arrays the append statement takes, serialised once.
struct raw_turns {
    std::vector<std::string> roles, contents;  // one array literal per 4-message window
    raw_turns() {
        const auto& h = history_1k();
        for (std::size_t i = 1; i + 4 <= h.size(); i += 4) {
            std::vector<std::string> r, t;
            for (std::size_t k = i; k < i + 4; ++k) {
                r.emplace_back(ania::to_string(h[k].role));
                t.push_back(ania::dump(h[k]));
            }
            roles.emplace_back();
            contents.emplace_back();
            ania::detail::append_pg_text_array(roles.back(), r);
            ania::detail::append_pg_text_array(contents.back(), t);
        }
    }
    /// Window `j` appended to `session` with bare libpq. Null: done; else the error.
    const char* append(PGconn* c, const std::string& session, std::size_t j) const {
        j %= roles.size();
        return append(c, session, roles[j], contents[j]);
    }
    /// The statement postgres_store sends, by hand.
    static const char* append(PGconn* c, const std::string& session, const std::string& roles, const std::string& contents) {
        static const char* sql =
            "WITH s AS (INSERT INTO ania_chat_session(session_id, msg_count) VALUES ($1, $2::bigint)"
            " ON CONFLICT (session_id) DO UPDATE SET msg_count = ania_chat_session.msg_count + $2::bigint, updated_at = now()"
            " RETURNING msg_count - $2::bigint AS base)"
            " INSERT INTO ania_chat_message(session_id, seq, role, content)"
            " SELECT $1, s.base + t.ord - 1, t.role, t.content FROM s, unnest($3::text[], $4::text[]) WITH ORDINALITY AS t(role, content, ord)";
        const char* v[] = {session.c_str(), "4", roles.c_str(), contents.c_str()};
        const int len[] = {static_cast<int>(session.size()), 1, static_cast<int>(roles.size()), static_cast<int>(contents.size())};
        const int fmt[] = {1, 0, 0, 0};
        PGresult* r = PQexecParams(c, sql, 4, nullptr, v, len, fmt, 0);
        const bool ok = PQresultStatus(r) == PGRES_COMMAND_OK;
        static thread_local std::string why;
        why = ok ? "" : PQresultErrorMessage(r);
        PQclear(r);
        return ok ? nullptr : why.c_str();
    }
};

void raw_append_turn(benchmark::State& state) {
    reset_tables();
    { ania::postgres_store schema(pg()); }
    PGconn* c = PQconnectdb(pg().dsn.c_str());
    const raw_turns turns;
    const std::string session = "g:100001";
    std::size_t j = 0;
    for (auto _ : state)
        if (const char* why = turns.append(c, session, j++)) state.SkipWithError(why);
    PQfinish(c);
}
BENCHMARK(raw_append_turn)->Name("raw_pg_append_turn")->Unit(benchmark::kMicrosecond)->UseRealTime()->MinTime(2);

void raw_append_turn_txn(benchmark::State& state) {
    reset_tables();
    { ania::postgres_store schema(pg()); }
    PGconn* c = PQconnectdb(pg().dsn.c_str());
    PQclear(PQexec(c, "INSERT INTO ania_chat_session(session_id) VALUES ('g:100001')"));
    std::vector<std::string> rows;
    for (const auto& m : history_1k()) rows.push_back(ania::dump(m));
    std::size_t i = 1;
    for (auto _ : state) {
        if (i + 4 > rows.size()) i = 1;
        PQclear(PQexec(c, "BEGIN"));
        const char* id[] = {"g:100001"};
        PGresult* r = PQexecParams(c, "SELECT msg_count FROM ania_chat_session WHERE session_id = $1 FOR UPDATE", 1, nullptr, id, nullptr, nullptr, 0);
        long long seq = std::atoll(PQgetvalue(r, 0, 0));
        PQclear(r);
        for (int k = 0; k < 4; ++k, ++i) {
            const std::string s = std::to_string(seq++);
            const char* v[] = {"g:100001", s.c_str(), "user", rows[i].c_str()};
            PQclear(PQexecParams(c, "INSERT INTO ania_chat_message(session_id, seq, role, content) VALUES ($1, $2, $3, $4)", 4, nullptr, v,
                                 nullptr, nullptr, 0));
        }
        const std::string n = std::to_string(seq);
        const char* u[] = {"g:100001", n.c_str()};
        PQclear(PQexecParams(c, "UPDATE ania_chat_session SET msg_count = $2, updated_at = now() WHERE session_id = $1", 2, nullptr, u, nullptr,
                             nullptr, 0));
        PQclear(PQexec(c, "COMMIT"));
    }
    PQfinish(c);
}
BENCHMARK(raw_append_turn_txn)->Name("raw_pg_append_turn/txn")->Unit(benchmark::kMicrosecond)->UseRealTime();

void pg_load(benchmark::State& state) {
    reset_tables();
    ania::postgres_store store(pg());
    store.replace("g:100001", history_1k());
    for (auto _ : state) benchmark::DoNotOptimize(store.load("g:100001"));
}
BENCHMARK(pg_load)->Name("pg_load/1000")->Unit(benchmark::kMicrosecond)->UseRealTime();

void raw_load(benchmark::State& state) {
    reset_tables();
    { ania::postgres_store store(pg()); store.replace("g:100001", history_1k()); }
    PGconn* c = PQconnectdb(pg().dsn.c_str());
    for (auto _ : state) {
        const char* v[] = {"g:100001"};
        const int len[] = {8}, fmt[] = {1};
        PGresult* r = PQexecParams(c, "SELECT content FROM ania_chat_message WHERE session_id = $1 ORDER BY seq", 1, nullptr, v, len, fmt, 0);
        std::vector<ania::message> out;
        out.reserve(static_cast<std::size_t>(PQntuples(r)));
        for (int i = 0; i < PQntuples(r); ++i)
            out.push_back(ania::parse_message(std::string_view(PQgetvalue(r, i, 0), static_cast<std::size_t>(PQgetlength(r, i, 0)))));
        benchmark::DoNotOptimize(out);
        PQclear(r);
    }
    PQfinish(c);
}
BENCHMARK(raw_load)->Name("raw_pg_load/1000")->Unit(benchmark::kMicrosecond)->UseRealTime();

/// 4 processes at once, process k appending `turns` turns to session g:20000k: aggregate turns/s. `setup`
/// (connect, schema) runs in each child before the clock starts; the parent releases them together.
template <class Setup>
void in_4_processes(benchmark::State& state, Setup setup) {
    reset_tables();
    { ania::postgres_store schema(pg()); }
    constexpr int turns = 500;
    for (auto _ : state) {
        state.PauseTiming();
        int ready[2], go[2];
        if (::pipe(ready) != 0 || ::pipe(go) != 0) std::abort();
        std::vector<pid_t> kids;
        for (int k = 0; k < 4; ++k) {
            const pid_t pid = ::fork();
            if (pid == 0) {
                auto append_all = setup("g:" + std::to_string(200000 + k));
                char b = 0;
                if (::write(ready[1], &b, 1) != 1 || ::read(go[0], &b, 1) != 1) std::_Exit(2);
                std::_Exit(append_all(turns) ? 0 : 1);
            }
            kids.push_back(pid);
        }
        char b[4] = {};
        for (int got = 0; got < 4;) got += static_cast<int>(std::max<ssize_t>(0, ::read(ready[0], b, 4 - got)));
        state.ResumeTiming();
        if (::write(go[1], b, 4) != 4) std::abort();
        for (const pid_t pid : kids) {
            int status = 0;
            ::waitpid(pid, &status, 0);
            if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) state.SkipWithError("a child failed");
        }
        for (const int fd : {ready[0], ready[1], go[0], go[1]}) ::close(fd);
    }
    state.SetItemsProcessed(state.iterations() * 4 * turns);  // items/s = aggregate turns/s
}

void append_4proc(benchmark::State& state) {
    in_4_processes(state, [](std::string session) {
        return [store = std::make_shared<ania::postgres_store>(pg()), session](int turns) {
            const auto& h = history_1k();
            for (int t = 0; t < turns; ++t) store->append(session, std::span(h).subspan(1 + 4 * static_cast<std::size_t>(t % 200), 4));
            return true;
        };
    });
}
BENCHMARK(append_4proc)->Name("pg_append_turn/4proc")->Unit(benchmark::kMillisecond)->UseRealTime()->Iterations(3);

void raw_append_4proc(benchmark::State& state) {
    // The same operation as the store's: each turn's messages serialised (ania::dump) and sent in one statement.
    in_4_processes(state, [](std::string session) {
        return [c = std::shared_ptr<PGconn>(PQconnectdb(pg().dsn.c_str()), PQfinish), session](int turns) {
            const auto& h = history_1k();
            bool ok = PQstatus(c.get()) == CONNECTION_OK;
            for (int t = 0; ok && t < turns; ++t) {
                const auto turn = std::span(h).subspan(1 + 4 * static_cast<std::size_t>(t % 200), 4);
                std::vector<std::string> r, m;
                for (const auto& msg : turn) {
                    r.emplace_back(ania::to_string(msg.role));
                    m.push_back(ania::dump(msg));
                }
                std::string roles, contents;
                ania::detail::append_pg_text_array(roles, r);
                ania::detail::append_pg_text_array(contents, m);
                ok = raw_turns::append(c.get(), session, roles, contents) == nullptr;
            }
            return ok;
        };
    });
}
BENCHMARK(raw_append_4proc)->Name("raw_pg_append_turn/4proc")->Unit(benchmark::kMillisecond)->UseRealTime()->Iterations(3);

#ifdef ANIA_BENCH_SQLITE
void sqlite_append(benchmark::State& state) {
    const char* base = std::getenv("TMPDIR");
    std::string tmpl = std::string(base && *base ? base : "/tmp") + "/ania-bench-pg-XXXXXX";
    if (!::mkdtemp(tmpl.data())) std::abort();
    const std::string dir = tmpl;
    {
        ania::sqlite_store_options o;
        o.synchronous = ania::sqlite_sync::normal;
        ania::sqlite_store store(dir + "/h.db", o);
        const auto& h = history_1k();
        std::size_t i = 1;
        for (auto _ : state) {
            if (i + 4 > h.size()) i = 1;
            store.append("g:100001", std::span(h).subspan(i, 4));
            i += 4;
        }
    }
    std::error_code ec;
    std::filesystem::remove_all(dir, ec);
}
BENCHMARK(sqlite_append)->Name("sqlite_append_turn/pg_set")->Unit(benchmark::kMicrosecond);
#endif

} // namespace

BENCHMARK_MAIN();
