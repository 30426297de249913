// bench/store.cpp -- the SQLite history store on the shared data set. Fixed names:
//   sqlite_append_turn/normal, sqlite_append_turn/full   one turn of 4 messages, JSON serialisation included
//   sqlite_load/1000                                     a 1000-message session, JSON parsing included
//   sqlite_load/10k, sqlite_load_window/10k              history_10k loaded; and counted into a window (#30)
//   sqlite_persist_after_truncate/1000                   1000 -> 500 after truncate_oldest_half (drop_front);
//   sqlite_drop_front/1000                               the same path under #30's name
//   raw_sqlite_drop_front/1000                           its floor: one range DELETE through the C API
// and, for comparison on the same file system, raw_sqlite_append_turn/normal|full: the same schema and
// transaction written with the C API and pre-serialised rows. The archive (#31):
//   history_search/archive_10k          one search (a query of the data set's queries.jsonl, 5 hits) over a
//                                       session whose archive holds history_10k, index warm, ram_store
//   history_search/archive_10k/sqlite   the same through sqlite_store (its state read on every search)
//   archive_index_build/10k             the first search of that session: the whole archive read and indexed
#include <benchmark/benchmark.h>

#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <map>
#include <string>
#include <vector>

#include <sqlite3.h>

#include <ania/compressor/truncate_oldest_half.hpp>
#include <ania/context/token_window.hpp>
#include <ania/history/archive_search.hpp>
#include <ania/json.hpp>
#include <ania/store/ram_store.hpp>
#include <ania/store/sqlite_store.hpp>

#include "bench_data.hpp"

namespace {

/// A history of the data set (history_1k, history_10k), parsed once.
const std::vector<ania::message>& history(const std::string& name) {
    static std::map<std::string, std::vector<ania::message>> cache;
    auto& h = cache[name];
    if (h.empty())
        for (const auto& l : ania_test::load_lines(name)) h.push_back(ania::parse_message(l));
    return h;
}
const std::vector<ania::message>& history_1k() { return history("history_1k"); }

std::string& bench_dir() {
    static std::string dir;
    return dir;
}

/// A fresh database path in a directory under $TMPDIR that is removed at exit.
std::string db_path(const std::string& name) {
    if (bench_dir().empty()) {
        const char* base = std::getenv("TMPDIR");
        std::string tmpl = std::string(base && *base ? base : "/tmp") + "/ania-bench-XXXXXX";
        if (!mkdtemp(tmpl.data())) std::abort();
        bench_dir() = tmpl;
        std::atexit([] { std::error_code ec; std::filesystem::remove_all(bench_dir(), ec); });
    }
    const std::string& dir = bench_dir();
    const std::string p = dir + "/" + name;
    std::filesystem::remove(p);
    std::filesystem::remove(p + "-wal");
    std::filesystem::remove(p + "-shm");
    return p;
}

ania::sqlite_store_options options(ania::sqlite_sync sync) {
    ania::sqlite_store_options o;
    o.synchronous = sync;
    return o;
}

void append_turn(benchmark::State& state, ania::sqlite_sync sync) {
    ania::sqlite_store store(db_path("append.db"), options(sync));
    const auto& h = history_1k();
    std::size_t i = 1;
    for (auto _ : state) {
        if (i + 4 > h.size()) i = 1;
        store.append("g:100001", std::span(h).subspan(i, 4));
        i += 4;
    }
}

void raw_append_turn(benchmark::State& state, ania::sqlite_sync sync) {
    sqlite3* db = nullptr;
    sqlite3_open(db_path("raw.db").c_str(), &db);
    sqlite3_exec(db, "PRAGMA journal_mode=WAL", nullptr, nullptr, nullptr);
    sqlite3_exec(db, sync == ania::sqlite_sync::full ? "PRAGMA synchronous=FULL" : "PRAGMA synchronous=NORMAL", nullptr, nullptr, nullptr);
    sqlite3_exec(db, ania::detail::sqlite_history_schema, nullptr, nullptr, nullptr);
    sqlite3_exec(db, "INSERT INTO ania_chat_session VALUES('g:100001', 0, 'x', 'x')", nullptr, nullptr, nullptr);
    sqlite3_stmt *sel, *ins, *upd;
    sqlite3_prepare_v2(db, "SELECT msg_count FROM ania_chat_session WHERE session_id = ?1", -1, &sel, nullptr);
    sqlite3_prepare_v2(db, "INSERT INTO ania_chat_message VALUES(?1, ?2, ?3, ?4, ?5)", -1, &ins, nullptr);
    sqlite3_prepare_v2(db, "UPDATE ania_chat_session SET msg_count = ?2, updated_at = ?3 WHERE session_id = ?1", -1, &upd, nullptr);
    std::vector<std::string> rows;
    for (const auto& m : history_1k()) rows.push_back(ania::dump(m));
    std::size_t i = 1;
    for (auto _ : state) {
        if (i + 4 > rows.size()) i = 1;
        sqlite3_exec(db, "BEGIN IMMEDIATE", nullptr, nullptr, nullptr);
        sqlite3_bind_text(sel, 1, "g:100001", -1, SQLITE_STATIC);
        sqlite3_step(sel);
        sqlite3_int64 seq = sqlite3_column_int64(sel, 0);
        sqlite3_reset(sel);
        for (int k = 0; k < 4; ++k, ++i) {
            sqlite3_bind_text(ins, 1, "g:100001", -1, SQLITE_STATIC);
            sqlite3_bind_int64(ins, 2, seq++);
            sqlite3_bind_text(ins, 3, "user", -1, SQLITE_STATIC);
            sqlite3_bind_text(ins, 4, rows[i].data(), static_cast<int>(rows[i].size()), SQLITE_STATIC);
            sqlite3_bind_text(ins, 5, "2026-12-01T00:00:00.000000000Z", -1, SQLITE_STATIC);
            sqlite3_step(ins);
            sqlite3_reset(ins);
        }
        sqlite3_bind_text(upd, 1, "g:100001", -1, SQLITE_STATIC);
        sqlite3_bind_int64(upd, 2, seq);
        sqlite3_bind_text(upd, 3, "2026-12-01T00:00:00.000000000Z", -1, SQLITE_STATIC);
        sqlite3_step(upd);
        sqlite3_reset(upd);
        sqlite3_exec(db, "COMMIT", nullptr, nullptr, nullptr);
    }
    sqlite3_finalize(sel);
    sqlite3_finalize(ins);
    sqlite3_finalize(upd);
    sqlite3_close(db);
}

void load_1000(benchmark::State& state) {
    ania::sqlite_store store(db_path("load.db"), options(ania::sqlite_sync::normal));
    store.replace("g:100001", history_1k());
    for (auto _ : state) benchmark::DoNotOptimize(store.load("g:100001"));
}

// #30: the cold path of a session (a restart, an eviction): the rows of history_10k read and parsed
// (sqlite_load/10k), then also counted into a token window as the agent does at its first turn
// (sqlite_load_window/10k: target within 1.5x of the load alone).
void load_10k(benchmark::State& state, bool window) {
    ania::sqlite_store store(db_path("load10k.db"), options(ania::sqlite_sync::normal));
    store.replace("g:100002", history("history_10k"));
    for (auto _ : state) {
        std::vector<ania::message> h = store.load("g:100002");
        if (window) {
            ania::token_window<> w;
            w.assign(std::move(h));
            benchmark::DoNotOptimize(w.context_tokens());
        } else {
            benchmark::DoNotOptimize(h);
        }
    }
}

// fast_delete: PRAGMA secure_delete=FAST (Debian builds SQLite with secure_delete on: every deleted row's
// bytes are zeroed, and the freed pages written): what that privacy costs a truncation.
void persist_after_truncate(benchmark::State& state, bool fast_delete) {
    ania::sqlite_store_options o = options(ania::sqlite_sync::normal);
    if (fast_delete) o.pragmas = {"secure_delete=FAST"};
    ania::sqlite_store store(db_path(fast_delete ? "truncate_fast.db" : "truncate.db"), o);
    const auto& h = history_1k();
    const std::size_t cut = ania::truncate_oldest_half::cut(h);
    for (auto _ : state) {
        state.PauseTiming();
        store.replace("g:100001", h);
        state.ResumeTiming();
        store.drop_front("g:100001", cut);
    }
}

// The floor of the same truncation on the same file system: the C API, the same schema and rows, and only
// what a prefix drop cannot do without (BEGIN IMMEDIATE, one range DELETE, COMMIT); the refill is not timed.
void raw_drop_front(benchmark::State& state) {
    sqlite3* db = nullptr;
    sqlite3_open(db_path("raw_truncate.db").c_str(), &db);
    sqlite3_exec(db, "PRAGMA journal_mode=WAL", nullptr, nullptr, nullptr);
    sqlite3_exec(db, "PRAGMA synchronous=NORMAL", nullptr, nullptr, nullptr);
    sqlite3_exec(db, ania::detail::sqlite_history_schema, nullptr, nullptr, nullptr);
    sqlite3_stmt *ins, *del;
    sqlite3_prepare_v2(db, "INSERT INTO ania_chat_message VALUES('g:100001', ?1, 'user', ?2, '2026-12-01T00:00:00.000000000Z')", -1, &ins, nullptr);
    sqlite3_prepare_v2(db, "DELETE FROM ania_chat_message WHERE session_id = 'g:100001' AND seq < ?1", -1, &del, nullptr);
    std::vector<std::string> rows;
    for (const auto& m : history_1k()) rows.push_back(ania::dump(m));
    const auto cut = static_cast<sqlite3_int64>(ania::truncate_oldest_half::cut(history_1k()));
    for (auto _ : state) {
        state.PauseTiming();
        sqlite3_exec(db, "BEGIN IMMEDIATE; DELETE FROM ania_chat_message", nullptr, nullptr, nullptr);
        for (std::size_t i = 0; i < rows.size(); ++i) {
            sqlite3_bind_int64(ins, 1, static_cast<sqlite3_int64>(i));
            sqlite3_bind_text(ins, 2, rows[i].data(), static_cast<int>(rows[i].size()), SQLITE_STATIC);
            sqlite3_step(ins);
            sqlite3_reset(ins);
        }
        sqlite3_exec(db, "COMMIT", nullptr, nullptr, nullptr);
        state.ResumeTiming();
        sqlite3_exec(db, "BEGIN IMMEDIATE", nullptr, nullptr, nullptr);
        sqlite3_bind_int64(del, 1, cut);
        sqlite3_step(del);
        sqlite3_reset(del);
        sqlite3_exec(db, "COMMIT", nullptr, nullptr, nullptr);
    }
    sqlite3_finalize(ins);
    sqlite3_finalize(del);
    sqlite3_close(db);
}

void replace_after_truncate(benchmark::State& state) {
    ania::sqlite_store store(db_path("replace.db"), options(ania::sqlite_sync::normal));
    const auto& h = history_1k();
    const std::span<const ania::message> kept = std::span(h).subspan(ania::truncate_oldest_half::cut(h));
    for (auto _ : state) {
        state.PauseTiming();
        store.replace("g:100001", h);
        state.ResumeTiming();
        store.replace("g:100001", kept);
    }
}


const std::vector<std::string>& queries() {
    static const auto q = [] {
        std::vector<std::string> out;
        for (const auto& l : ania_test::load_lines("queries")) out.push_back(ania::parse_json(l).at("query").get<std::string>());
        return out;
    }();
    return q;
}

template <class Store>
void archive_into(Store& s) {
    const auto& h = history("history_10k");
    s.replace_archiving("g:1", std::span<const ania::message>{}, {h, "summary", "2026-12-05T20:00:00.000000000Z"});
}

template <class Store>
void search_archive(benchmark::State& state, Store& store) {
    archive_into(store);
    ania::archive_index index(store);
    (void)index.search("g:1", "warm", 5);
    std::size_t i = 0, hits = 0, searches = 0;
    for (auto _ : state) {
        const auto r = index.search("g:1", queries()[i++ % queries().size()], 5);
        hits += r.hits.size();
        ++searches;
        benchmark::DoNotOptimize(r);
    }
    state.counters["hits_per_search"] = static_cast<double>(hits) / static_cast<double>(searches ? searches : 1);
}

void search_archive_ram(benchmark::State& state) {
    ania::ram_store store(ania::archive_options{.max_messages = 0, .max_bytes = 0});
    search_archive(state, store);
}

void search_archive_sqlite(benchmark::State& state) {
    ania::sqlite_store_options o;
    o.archive = {.max_messages = 0, .max_bytes = 0};
    ania::sqlite_store store(db_path("archive.db"), o);
    search_archive(state, store);
}

void build_archive_index(benchmark::State& state) {
    ania::ram_store store(ania::archive_options{.max_messages = 0, .max_bytes = 0});
    archive_into(store);
    for (auto _ : state) {
        ania::archive_index index(store);
        benchmark::DoNotOptimize(index.search("g:1", "warm", 5));
    }
}

BENCHMARK(search_archive_ram)->Name("history_search/archive_10k")->Unit(benchmark::kMicrosecond);
BENCHMARK(search_archive_sqlite)->Name("history_search/archive_10k/sqlite")->Unit(benchmark::kMicrosecond);
BENCHMARK(build_archive_index)->Name("archive_index_build/10k")->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(append_turn, normal, ania::sqlite_sync::normal)->Name("sqlite_append_turn/normal")->Unit(benchmark::kMicrosecond);
BENCHMARK_CAPTURE(append_turn, full, ania::sqlite_sync::full)->Name("sqlite_append_turn/full")->Unit(benchmark::kMicrosecond);
BENCHMARK_CAPTURE(raw_append_turn, normal, ania::sqlite_sync::normal)->Name("raw_sqlite_append_turn/normal")->Unit(benchmark::kMicrosecond);
BENCHMARK_CAPTURE(raw_append_turn, full, ania::sqlite_sync::full)->Name("raw_sqlite_append_turn/full")->Unit(benchmark::kMicrosecond);
BENCHMARK(load_1000)->Name("sqlite_load/1000")->Unit(benchmark::kMicrosecond);
BENCHMARK_CAPTURE(load_10k, plain, false)->Name("sqlite_load/10k")->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(load_10k, window, true)->Name("sqlite_load_window/10k")->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(persist_after_truncate, plain, false)->Name("sqlite_persist_after_truncate/1000")->Unit(benchmark::kMicrosecond);
BENCHMARK_CAPTURE(persist_after_truncate, plain, false)->Name("sqlite_drop_front/1000")->Unit(benchmark::kMicrosecond);  // #30's name, same path
BENCHMARK_CAPTURE(persist_after_truncate, fast, true)->Name("sqlite_drop_front/1000/secure_delete_fast")->Unit(benchmark::kMicrosecond);
BENCHMARK(raw_drop_front)->Name("raw_sqlite_drop_front/1000")->Unit(benchmark::kMicrosecond);
BENCHMARK(replace_after_truncate)->Name("sqlite_replace_after_truncate/1000")->Unit(benchmark::kMicrosecond);

} // namespace

BENCHMARK_MAIN();
