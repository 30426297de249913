// tests/unit/sqlite_durability.cpp -- the SQLite store against crashes (SIGKILL), injected write and sync
// failures, a full disk, damaged files, hostile session ids and several processes on one file.
#include <catch2/catch.hpp>

#include <algorithm>

#include <sys/types.h>
#include <sys/wait.h>
#include <signal.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <fstream>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include <sqlite3.h>

#include <ania/history/background_writer.hpp>
#include <ania/json.hpp>
#include <ania/store/sqlite_store.hpp>

#include <ania/testing/history_store.hpp>
#include "fault_vfs.hpp"
#include "quiet_sqlite.hpp"
#include "temp_dir.hpp"

using ania::message;

namespace {

using ania_test::quiet;

std::string read_bytes(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}
void write_bytes(const std::string& path, const std::string& bytes) {
    std::ofstream out(path, std::ios::binary | std::ios::trunc);
    out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
}

/// Opens the file with raw SQLite and checks every invariant the store promises.
void check_invariants(const std::string& path) {
    sqlite3* db = nullptr;
    REQUIRE(sqlite3_open_v2(path.c_str(), &db, SQLITE_OPEN_READWRITE, nullptr) == SQLITE_OK);
    sqlite3_stmt* st = nullptr;
    sqlite3_prepare_v2(db, "PRAGMA integrity_check", -1, &st, nullptr);
    REQUIRE(sqlite3_step(st) == SQLITE_ROW);
    CHECK(std::string(reinterpret_cast<const char*>(sqlite3_column_text(st, 0))) == "ok");
    sqlite3_finalize(st);
    sqlite3_prepare_v2(db,
                       "SELECT s.session_id, s.msg_count, (SELECT count(*) FROM ania_chat_message m WHERE m.session_id = s.session_id),"
                       " (SELECT coalesce(max(seq), -1) FROM ania_chat_message m WHERE m.session_id = s.session_id)"
                       " FROM ania_chat_session s", -1, &st, nullptr);
    while (sqlite3_step(st) == SQLITE_ROW) {
        const auto count = sqlite3_column_int64(st, 1);
        CHECK(count == sqlite3_column_int64(st, 2));
        CHECK(count == sqlite3_column_int64(st, 3) + 1);
    }
    sqlite3_finalize(st);
    sqlite3_prepare_v2(db, "SELECT content FROM ania_chat_message", -1, &st, nullptr);
    while (sqlite3_step(st) == SQLITE_ROW) {
        const std::string row(static_cast<const char*>(sqlite3_column_blob(st, 0)), static_cast<std::size_t>(sqlite3_column_bytes(st, 0)));
        CHECK_NOTHROW(ania::parse_message(row));
    }
    sqlite3_finalize(st);
    sqlite3_close(db);
}

} // namespace

TEST_CASE("crash: a writer killed with SIGKILL at random moments never leaves a broken file", "[sqlite][crash]") {
    ania_test::temp_dir dir;
    const std::string path = dir.file("crash.db");
    { ania::sqlite_store init(path, quiet()); }
    std::mt19937 rng(1234);
    std::uniform_int_distribution<int> delay_us(500, 15000);
    int killed_mid_run = 0;
    for (int round = 0; round < 120; ++round) {
        // The random moment is counted from the child's first committed write: on a loaded machine (a
        // sanitizer build, another test beside it) opening the file alone can outlast the longest delay.
        int ready[2];
        REQUIRE(pipe(ready) == 0);
        const pid_t child = fork();
        REQUIRE(child >= 0);
        if (child == 0) {
            close(ready[0]);
            ania::sqlite_store store(path, quiet());
            for (int i = 0;; ++i) {
                store.append("g:" + std::to_string(i % 3), ania::testing::sample_turn(std::to_string(round) + "-" + std::to_string(i)));
                if (i % 7 == 0) store.replace("f:9", ania::testing::sample_turn("r" + std::to_string(i)));
                if (i == 0) {
                    const char one = 1;
                    (void)!write(ready[1], &one, 1);
                    close(ready[1]);
                }
            }
        }
        close(ready[1]);
        char got = 0;
        REQUIRE(read(ready[0], &got, 1) == 1);  // its first turn and replace are committed
        close(ready[0]);
        std::this_thread::sleep_for(std::chrono::microseconds(delay_us(rng)));
        kill(child, SIGKILL);
        int status = 0;
        waitpid(child, &status, 0);
        killed_mid_run += WIFSIGNALED(status) ? 1 : 0;
        INFO("round " << round);
        check_invariants(path);
    }
    CHECK(killed_mid_run == 120);
    ania::sqlite_store after(path, quiet());
    CHECK(after.enabled());
    const auto g0 = after.load("g:0");
    CHECK(g0.size() > 40);               // the children did write, round after round
    CHECK(g0.size() % 4 == 0);           // whole turns only
    CHECK(after.load("f:9").size() == 4);  // replace is all or nothing too
}

TEST_CASE("faults: a failed write or sync makes the append all-or-nothing, and the store recovers", "[sqlite][faults]") {
    ania_test::temp_dir dir;
    const std::string path = dir.file("faults.db");
    auto opt = quiet();
    opt.vfs = ania_test::fault_vfs_name();
    ania::sqlite_store store(path, opt);
    REQUIRE(store.enabled());
    std::size_t expected = 0;
    int failures = 0;
    for (const int code : {SQLITE_FULL, SQLITE_IOERR_WRITE}) {
        for (int nth = 0; nth < 12; ++nth) {
            for (const bool sync : {false, true}) {
                if (sync) ania_test::faults().arm_sync(nth % 3, code);
                else ania_test::faults().arm_write(nth, code);
                bool ok = true;
                try {
                    store.append("s", ania::testing::sample_turn(std::to_string(nth)));
                } catch (const ania::error& e) {
                    ok = false;
                    ++failures;
                    CHECK(e.code() == ania::errc::store_io);  // transient: the connection was closed, the next call reopens
                }
                ania_test::faults().disarm();
                if (ok) expected += 4;
                INFO("code " << code << " nth " << nth << " sync " << sync << " ok " << ok);
                const auto h = store.load("s");  // the next call reopens the connection if it had to close
                REQUIRE(h.size() == expected);
            }
        }
    }
    CHECK(failures > 10);
    store.append("s", ania::testing::sample_turn("after"));
    CHECK(store.load("s").size() == expected + 4);
    check_invariants(path);
}

TEST_CASE("faults: the background writer retries a transient failure, in order, and logs it", "[sqlite][faults]") {
    ania_test::temp_dir dir;
    auto opt = quiet();
    opt.vfs = ania_test::fault_vfs_name();
    ania::sqlite_store store(dir.file("bg.db"), opt);
    std::vector<std::string> logged;
    std::mutex m;
    ania::background_writer_options wopt;
    wopt.log = [&](ania::log_level, std::string_view t) { std::lock_guard l(m); logged.emplace_back(t); };
    wopt.first_backoff = std::chrono::milliseconds(1);
    ania::background_writer<ania::sqlite_store> w(store, wopt);
    ania_test::faults().arm_write(0, SQLITE_FULL);  // the first write fails once (an I/O error: the store reopens)
    w.append("s", ania::testing::sample_turn("1"));
    w.append("s", ania::testing::sample_turn("2"));
    w.flush();
    ania_test::faults().disarm();
    CHECK(w.failures() == 0);
    REQUIRE(logged.size() >= 1);
    CHECK(logged[0].find("retrying") != std::string::npos);
    CHECK(logged[0].find("full") != std::string::npos);
    const auto h = store.load("s");
    REQUIRE(h.size() == 8);
    CHECK(h[0] == ania::testing::sample_turn("1")[0]);  // the retried turn kept its place
    CHECK(h[4] == ania::testing::sample_turn("2")[0]);
}

TEST_CASE("faults: a write that keeps failing is given up, reported to on_dropped, and later writes run", "[sqlite][faults]") {
    ania_test::temp_dir dir;
    auto opt = quiet();
    opt.pragmas = {"max_page_count=40"};  // the disk is really full: every retry fails
    ania::sqlite_store store(dir.file("full.db"), opt);
    REQUIRE(store.enabled());
    std::vector<ania::message> big;
    for (int i = 0; i < 50; ++i) big.push_back(ania::message::user(std::string(4000, 'x')));
    std::vector<std::string> dropped;
    int attempts = 0;
    ania::background_writer_options wopt;
    wopt.log = [](ania::log_level, std::string_view) {};
    wopt.first_backoff = std::chrono::milliseconds(1);
    wopt.retries = 3;
    wopt.on_dropped = [&](const ania::dropped_write& d) {  // on the writer thread; flush() orders it before us
        dropped.emplace_back(d.session);
        attempts = d.attempts;
        CHECK(d.op == ania::dropped_write::kind::append);
        CHECK(d.messages.size() == 50);
        CHECK(std::string(d.error).find("full") != std::string::npos);
    };
    ania::background_writer<ania::sqlite_store> w(store, wopt);
    w.append("s", big);
    w.append("s", ania::testing::sample_turn("small"));
    w.flush();
    CHECK(dropped == std::vector<std::string>{"s"});
    CHECK(attempts == 4);  // the first try and three retries
    CHECK(w.failures() == 1);
    CHECK(store.load("s") == ania::testing::sample_turn("small"));
}

TEST_CASE("disk full (max_page_count): appends fail whole, what is stored stays loadable", "[sqlite][faults]") {
    ania_test::temp_dir dir;
    auto opt = quiet();
    opt.pragmas = {"max_page_count=40"};
    ania::sqlite_store store(dir.file("full.db"), opt);
    REQUIRE(store.enabled());
    std::size_t stored = 0;
    bool hit_full = false;
    for (int i = 0; i < 500 && !hit_full; ++i) {
        try {
            store.append("s", ania::testing::sample_turn(std::string(200, 'x') + std::to_string(i)));
            stored += 4;
        } catch (const ania::error& e) {
            hit_full = true;
            CHECK(std::string(e.what()).find("full") != std::string::npos);
        }
    }
    REQUIRE(hit_full);
    CHECK(store.load("s").size() == stored);
    store.clear("s");  // room again
    store.append("s", ania::testing::sample_turn("fits"));
    CHECK(store.load("s").size() == 4);
}

TEST_CASE("damaged files disable persistence and are left byte-identical", "[sqlite][damaged]") {
    ania_test::temp_dir dir;
    const std::string good = dir.file("good.db");
    {
        ania::sqlite_store s(good, quiet());
        for (int i = 0; i < 60; ++i) s.append("g:" + std::to_string(i % 5), ania::testing::sample_turn(std::string(300, 'y') + std::to_string(i)));
    }  // closing the last connection checkpoints the WAL into the file
    const std::string original = read_bytes(good);
    REQUIRE(original.size() > 4096 * 8);
    std::mt19937 rng(5);
    const auto damaged = [&](const std::string& name, std::string bytes) {
        const std::string path = dir.file(name);
        write_bytes(path, bytes);
        std::vector<std::string> logged;
        ania::sqlite_store s(path, quiet(&logged));
        INFO(name);
        CHECK_FALSE(s.enabled());
        CHECK(s.load("g:1").empty());
        s.append("g:1", ania::testing::sample_turn("new"));
        s.replace("g:2", {});
        s.clear("g:3");
        CHECK(read_bytes(path) == bytes);
        REQUIRE_FALSE(logged.empty());
        CHECK(logged[0].find("DISABLED") != std::string::npos);
    };
    std::string garbage(original.size(), '\0');
    for (char& c : garbage) c = static_cast<char>(rng());
    damaged("garbage.db", garbage);
    std::string page = original;
    for (std::size_t i = 4096 * 3; i < 4096 * 4; ++i) page[i] = static_cast<char>(rng());
    damaged("page.db", page);
    damaged("truncated.db", original.substr(0, original.size() / 2 + 100));
}

TEST_CASE("hostile session ids are stored and found verbatim", "[sqlite][bad-input]") {
    ania_test::temp_dir dir;
    ania::sqlite_store store(dir.file("ids.db"), quiet());
    const std::vector<std::string> ids = {"'; DROP TABLE ania_chat_message; --", "g:1' OR '1'='1", "../../etc/passwd",
                                          std::string("nul\0inside", 10), std::string(1 << 20, 'L'), "", "中文会话 😀"};
    for (std::size_t i = 0; i < ids.size(); ++i) store.append(ids[i], std::vector<message>{message::user("m" + std::to_string(i))});
    for (std::size_t i = 0; i < ids.size(); ++i) {
        const auto h = store.load(ids[i]);
        REQUIRE(h.size() == 1);
        CHECK(h[0].content == "m" + std::to_string(i));
    }
    CHECK(store.load("nul").empty());  // the NUL is part of the id, not its end
    CHECK(store.load("g:1").empty());
    check_invariants(store.path());
}

TEST_CASE("four processes x 200 appends on one file: contiguous seq, nothing lost", "[sqlite][processes]") {
    ania_test::temp_dir dir;
    const std::string path = dir.file("shared.db");
    { ania::sqlite_store init(path, quiet()); }
    std::vector<pid_t> children;
    for (int p = 0; p < 4; ++p) {
        const pid_t child = fork();
        REQUIRE(child >= 0);
        if (child == 0) {
            int code = 0;
            try {
                auto opt = quiet();
                opt.synchronous = ania::sqlite_sync::normal;
                opt.busy_timeout = std::chrono::milliseconds(20000);
                ania::sqlite_store store(path, opt);
                for (int i = 0; i < 200; ++i) store.append("shared", std::vector<message>{message::user("p" + std::to_string(p) + ":" + std::to_string(i))});
            } catch (...) {
                code = 1;
            }
            _exit(code);
        }
        children.push_back(child);
    }
    for (const pid_t c : children) {
        int status = 0;
        waitpid(c, &status, 0);
        CHECK(WIFEXITED(status));
        CHECK(WEXITSTATUS(status) == 0);
    }
    ania::sqlite_store store(path, quiet());
    const auto h = store.load("shared");
    REQUIRE(h.size() == 800);
    std::vector<int> next(4, 0);
    for (const auto& m : h) {
        const int p = m.content[1] - '0';
        CHECK(m.content == "p" + std::to_string(p) + ":" + std::to_string(next[static_cast<std::size_t>(p)]++));
    }
    check_invariants(path);
}

#include <ania/memory/manager.hpp>
#include <ania/memory/sqlite_backend.hpp>

TEST_CASE("faults: a memory write that fails with an I/O error is reported as store_io; the index keeps what the file holds", "[sqlite][faults][memory]") {
    using namespace ania::memory;
    ania_test::temp_dir dir;
    std::vector<std::string> logged;
    auto opt = quiet(&logged);
    opt.vfs = ania_test::fault_vfs_name();
    sqlite_backend backend(dir.file("mem.db"), opt);
    REQUIRE(backend.enabled());
    manager_options mo;
    mo.log = [](ania::log_level, std::string_view) {};
    sqlite_manager m(backend, mo);
    const scope g = scope::from("g:3");
    REQUIRE(m.save(g, "before the fault").status == save_status::saved);
    ania_test::faults().arm_write(0, SQLITE_IOERR_WRITE);
    const auto failed = m.save(g, "during the fault");
    ania_test::faults().disarm();
    CHECK(failed.status == save_status::failed);
    CHECK(failed.error.find("store_io") != std::string::npos);
    CHECK(m.size(g) == 1);  // the index holds what the file holds
    CHECK(m.save(g, "小明喜欢爬山").status == save_status::saved);  // and the next write works
    // ... on a new connection: the broken one was closed and the file reopened (detail::sqlite_connection).
    CHECK(std::count_if(logged.begin(), logged.end(), [](const std::string& l) {
              return l.find("memory sqlite_backend: reopened") != std::string::npos;
          }) == 1);
    sqlite_backend again(dir.file("mem.db"), quiet());
    std::vector<std::string> contents;
    for (const auto& e : again.load(g)) contents.push_back(e.content);
    CHECK(contents == std::vector<std::string>{"before the fault", "小明喜欢爬山"});
}
