// tests/unit/hardening.cpp -- the unlucky user: rows written by another tool, another process holding the
// lock, a write-protected file, two processes sharing one memory file. Real files, real processes.
#include <catch2/catch.hpp>

#include <sys/stat.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <string>
#include <thread>
#include <vector>

#include <sqlite3.h>

#include <ania/compressor/truncate_oldest_half.hpp>
#include <ania/config.hpp>
#include <ania/context/maybe_compress.hpp>
#include <ania/history/background_writer.hpp>
#include <ania/history/persist.hpp>
#include <ania/json.hpp>
#include <ania/memory/manager.hpp>
#include <ania/memory/sqlite_backend.hpp>
#include <ania/store/sqlite_store.hpp>

#include <ania/testing/history_store.hpp>
#include "quiet_sqlite.hpp"
#include "temp_dir.hpp"

using ania::message;

namespace {

using ania_test::quiet;

void exec(const std::string& path, const char* sql) {
    sqlite3* db = nullptr;
    REQUIRE(sqlite3_open(path.c_str(), &db) == SQLITE_OK);
    char* err = nullptr;
    const int rc = sqlite3_exec(db, sql, nullptr, nullptr, &err);
    INFO((err ? err : ""));
    sqlite3_free(err);
    sqlite3_close(db);
    REQUIRE(rc == SQLITE_OK);
}

std::int64_t count(const std::string& path, const char* sql) {
    sqlite3* db = nullptr;
    REQUIRE(sqlite3_open(path.c_str(), &db) == SQLITE_OK);
    sqlite3_stmt* st = nullptr;
    REQUIRE(sqlite3_prepare_v2(db, sql, -1, &st, nullptr) == SQLITE_OK);
    REQUIRE(sqlite3_step(st) == SQLITE_ROW);
    const auto n = sqlite3_column_int64(st, 0);
    sqlite3_finalize(st);
    sqlite3_close(db);
    return n;
}

/// Another process that holds a write lock on a file (BEGIN IMMEDIATE) until release().
class lock_holder {
public:
    explicit lock_holder(const std::string& path) {
        int ready[2], go[2];
        REQUIRE(pipe(ready) == 0);
        REQUIRE(pipe(go) == 0);
        pid_ = fork();
        REQUIRE(pid_ >= 0);
        if (pid_ == 0) {
            close(ready[0]);
            close(go[1]);
            sqlite3* db = nullptr;
            if (sqlite3_open(path.c_str(), &db) != SQLITE_OK) _exit(2);
            if (sqlite3_exec(db, "PRAGMA journal_mode=WAL; BEGIN IMMEDIATE", nullptr, nullptr, nullptr) != SQLITE_OK) _exit(3);
            char c = 1;
            if (write(ready[1], &c, 1) != 1) _exit(4);
            if (read(go[0], &c, 1) != 1) _exit(5);  // hold the lock until told
            sqlite3_exec(db, "ROLLBACK", nullptr, nullptr, nullptr);
            sqlite3_close(db);
            _exit(0);
        }
        close(ready[1]);
        close(go[0]);
        release_fd_ = go[1];
        char c = 0;
        REQUIRE(read(ready[0], &c, 1) == 1);
        close(ready[0]);
    }
    lock_holder(const lock_holder&) = delete;
    lock_holder& operator=(const lock_holder&) = delete;
    ~lock_holder() { release(); }
    void release() {
        if (pid_ <= 0) return;
        const char c = 1;
        (void)!write(release_fd_, &c, 1);
        close(release_fd_);
        int status = 0;
        waitpid(pid_, &status, 0);
        CHECK(WIFEXITED(status));
        CHECK(WEXITSTATUS(status) == 0);
        pid_ = -1;
    }

private:
    pid_t pid_ = -1;
    int release_fd_ = -1;
};

} // namespace

TEST_CASE("a row with an out-of-range number is skipped and logged; a compression's replace quarantines it", "[hardening][sqlite]") {
    ania_test::temp_dir dir;
    const std::string path = dir.file("h.db");
    std::vector<std::string> logged;
    ania::sqlite_store store(path, quiet(&logged));
    REQUIRE(store.enabled());
    std::vector<message> h;
    for (int i = 0; i < 10; ++i) h.push_back(i % 2 ? message::assistant("a" + std::to_string(i)) : message::user("u" + std::to_string(i)));
    store.append("s", h);
    // Written by another tool: valid JSON that nlohmann cannot hold (a number beyond double), as an extra
    // member and as the content.
    exec(path, "UPDATE ania_chat_message SET content = '{\"role\":\"user\",\"content\":\"u0\",\"weight\":-1e400}' WHERE seq = 0;"
               "UPDATE ania_chat_message SET content = '{\"role\":\"user\",\"content\":1e400}' WHERE seq = 6;");
    const auto loaded = store.load("s");
    CHECK(loaded.size() == 8);  // the two are skipped, nothing else is lost
    REQUIRE(logged.size() == 2);
    CHECK(logged[0].find("skipped stored message 0") != std::string::npos);

    // The conversation goes on: a compression replaces the history. The two rows must survive somewhere.
    ania::token_window<> w({100, 0.8, false});
    w.assign(ania::load_history(store, "s", [](ania::log_level, std::string_view) {}));
    w.set_last_prompt_tokens(1000);
    ania::truncate_oldest_half trunc;
    ania::turn_stats stats;
    ania::compress_options hooks;
    hooks.log = [](ania::log_level, std::string_view) {};
    REQUIRE(ania::maybe_compress(w, trunc, store, "s", stats, hooks).status == ania::compress_status::compressed);
    CHECK(store.load("s") == std::vector<message>(w.messages().begin(), w.messages().end()));
    CHECK(count(path, "SELECT count(*) FROM ania_chat_quarantine WHERE session_id = 's'") == 2);
    CHECK(count(path, "SELECT count(*) FROM ania_chat_quarantine WHERE content LIKE '%1e400%' AND reason LIKE '%parse_error%'") == 2);
    // Loaded again: nothing is skipped any more, and a later replace moves nothing again.
    logged.clear();
    CHECK(store.load("s").size() == w.size());
    store.replace("s", w.messages());
    CHECK(count(path, "SELECT count(*) FROM ania_chat_quarantine") == 2);
    CHECK(logged.empty());
}

TEST_CASE("drop_front quarantines the unparseable rows of the dropped range, not the others", "[hardening][sqlite]") {
    ania_test::temp_dir dir;
    const std::string path = dir.file("h.db");
    ania::sqlite_store store(path, quiet());
    std::vector<message> h;
    for (int i = 0; i < 8; ++i) h.push_back(message::user("m" + std::to_string(i)));
    store.append("s", h);
    exec(path, "UPDATE ania_chat_message SET content = '{\"role\":\"wizard\"}' WHERE seq IN (1, 6);");
    REQUIRE(store.load("s").size() == 6);
    store.drop_front("s", 4);  // seq 0..3 go: seq 1 is moved to quarantine, seq 6 stays where it is
    CHECK(count(path, "SELECT count(*) FROM ania_chat_quarantine") == 1);
    CHECK(count(path, "SELECT seq FROM ania_chat_quarantine") == 1);
    CHECK(count(path, "SELECT count(*) FROM ania_chat_message WHERE session_id = 's'") == 4);
    const auto rest = store.load("s");
    CHECK(rest == std::vector<message>{message::user("m4"), message::user("m5"), message::user("m7")});
    // Without a load that skipped anything, nothing is parsed and nothing moved (clear is an explicit forget).
    store.clear("s");
    CHECK(count(path, "SELECT count(*) FROM ania_chat_message") == 0);
}

TEST_CASE("every JSON entry point reports a number nlohmann cannot hold as ania::error", "[hardening][json]") {
    for (const char* text : {R"({"role":"user","content":"x","n":-1e400})", R"({"role":"user","content":1e400})",
                             R"({"role":"assistant","content":null,"tool_calls":[{"id":"c","type":"function","function":{"name":"f","arguments":{"x":1e999}}}]})"}) {
        INFO(text);
        CHECK_THROWS_AS(ania::parse_message(text), ania::error);
        CHECK_THROWS_AS(ania::parse_json(text), ania::error);
    }
    CHECK_THROWS_AS(ania::parse_config(R"({"compress_ratio":1e400})"), ania::error);
    CHECK_THROWS_WITH(ania::parse_config(R"({"max_context_tokens":1e400})"), Catch::Contains("parse_error"));
}

TEST_CASE("a file locked by another process past busy_timeout at open is opened later, not disabled", "[hardening][sqlite][processes]") {
    ania_test::temp_dir dir;
    const std::string path = dir.file("busy.db");
    lock_holder other(path);  // a new file, created and write-locked by another process
    auto opt = quiet();
    opt.busy_timeout = std::chrono::milliseconds(20);
    opt.open_attempts = 2;
    ania::sqlite_store store(path, opt);
    CHECK(store.enabled());  // busy is not unhealthy
    ania::memory::sqlite_backend memories(path, opt);
    CHECK(memories.enabled());
    try {  // still locked: the write is refused as busy, which a caller (the writer) may retry
        store.append("s", ania::testing::sample_turn("1"));
        FAIL("the append went through a held lock");
    } catch (const ania::error& e) {
        CHECK(e.code() == ania::errc::store_busy);
        CHECK(ania::is_transient(e.code()));
    }
    other.release();
    store.append("s", ania::testing::sample_turn("1"));
    CHECK(store.load("s") == ania::testing::sample_turn("1"));
    ania::memory::sqlite_manager m(memories);
    CHECK(m.save(ania::memory::scope::from("g:1"), "works after the lock").status == ania::memory::save_status::saved);
}

TEST_CASE("a busy_timeout longer than an int of milliseconds waits for the lock instead of turning the wait off", "[hardening][sqlite][processes]") {
    // 2^32 ms cast to int was 0: SQLite's busy handler off, the first held lock a store_busy at once.
    ania_test::temp_dir dir;
    const std::string path = dir.file("long.db");
    auto opt = quiet();
    opt.busy_timeout = std::chrono::milliseconds(std::int64_t(1) << 32);
    ania::sqlite_store store(path, opt);
    REQUIRE(store.enabled());
    lock_holder other(path);
    std::string failure = "not run";
    std::thread writer([&] {  // no Catch2 assertion off the main thread
        try {
            store.append("s", ania::testing::sample_turn("1"));  // waits out the lock
            failure.clear();
        } catch (const std::exception& e) {
            failure = e.what();
        }
    });
    std::this_thread::sleep_for(std::chrono::milliseconds(300));
    other.release();
    writer.join();
    CHECK(failure.empty());
    CHECK(store.load("s") == ania::testing::sample_turn("1"));
}

TEST_CASE("a lock held past busy_timeout during appends: the writer retries, nothing is dropped, order kept", "[hardening][sqlite][processes]") {
    ania_test::temp_dir dir;
    const std::string path = dir.file("w.db");
    auto opt = quiet();
    opt.busy_timeout = std::chrono::milliseconds(10);
    ania::sqlite_store store(path, opt);
    REQUIRE(store.enabled());
    std::vector<std::string> dropped;
    ania::background_writer_options wopt;
    wopt.log = [](ania::log_level, std::string_view) {};
    wopt.first_backoff = std::chrono::milliseconds(20);
    wopt.retries = 20;
    wopt.on_dropped = [&](const ania::dropped_write& d) { dropped.emplace_back(d.session); };
    ania::background_writer<ania::sqlite_store> writer(store, wopt);
    {
        lock_holder other(path);
        for (int i = 0; i < 3; ++i) writer.append("s", ania::testing::sample_turn(std::to_string(i)));
        std::this_thread::sleep_for(std::chrono::milliseconds(150));  // the writer meets the lock, and retries
        CHECK(store.load("s").empty());
    }  // released
    writer.flush();
    CHECK(dropped.empty());
    CHECK(writer.failures() == 0);
    std::vector<message> want;
    for (int i = 0; i < 3; ++i)
        for (auto& m : ania::testing::sample_turn(std::to_string(i))) want.push_back(m);
    CHECK(store.load("s") == want);
}

TEST_CASE("a write-protected database file disables both the history store and the memory backend", "[hardening][sqlite]") {
    ania_test::temp_dir dir;
    const std::string path = dir.file("ro.db");
    {
        ania::sqlite_store store(path, quiet());
        store.append("s", ania::testing::sample_turn("1"));
        ania::memory::sqlite_backend memories(path, quiet());
        REQUIRE(memories.enabled());
    }
    REQUIRE(chmod(path.c_str(), 0444) == 0);
    // File permissions do not bind root (CI runs as root): check as an unprivileged user in a child.
    REQUIRE(chmod(dir.path().c_str(), 0777) == 0);
    const pid_t child = fork();
    REQUIRE(child >= 0);
    if (child == 0) {
        if (geteuid() == 0 && (setgid(65534) != 0 || setuid(65534) != 0)) _exit(10);
        std::vector<std::string> logged;
        ania::sqlite_store store(path, quiet(&logged));
        ania::memory::sqlite_backend memories(path, quiet(&logged));
        int code = 0;
        if (store.enabled()) code |= 1;
        if (memories.enabled()) code |= 2;
        if (logged.size() != 2 || logged[0].find("read-only") == std::string::npos) code |= 4;
        _exit(code);
    }
    int status = 0;
    waitpid(child, &status, 0);
    REQUIRE(WIFEXITED(status));
    INFO("exit code bits: 1 store enabled, 2 memory enabled, 4 log; 10 setuid failed");
    CHECK(WEXITSTATUS(status) == 0);
    ania::sqlite_store_options o = quiet();
    REQUIRE(chmod(path.c_str(), 0644) == 0);
    ania::sqlite_store again(path, o);  // the file itself was left as it was
    CHECK(again.load("s") == ania::testing::sample_turn("1"));
}

TEST_CASE("two processes' memory managers on one file: each sees the other's saves, dedup and the cap hold", "[hardening][memory][processes]") {
    using namespace ania::memory;
    ania_test::temp_dir dir;
    const std::string path = dir.file("mem.db");
    const scope g = scope::from("g:7");
    manager_options opt;
    opt.log = [](ania::log_level, std::string_view) {};
    opt.max_entries = 5;
    sqlite_backend here_backend(path, quiet());
    sqlite_manager here(here_backend, opt);
    CHECK(here.size(g) == 0);  // loaded (and cached) before the other process writes
    const auto in_child = [&](auto&& body) {
        const pid_t child = fork();
        REQUIRE(child >= 0);
        if (child == 0) {
            sqlite_backend there_backend(path, quiet());
            sqlite_manager there(there_backend, opt);
            _exit(body(there));
        }
        int status = 0;
        waitpid(child, &status, 0);
        REQUIRE(WIFEXITED(status));
        return WEXITSTATUS(status);
    };
    const std::vector<std::string> theirs = {"Alice drinks green tea every morning", "小明周末喜欢去西湖边跑步",
                                             "the build server restarts at 3am"};
    CHECK(in_child([&](auto& there) {
              for (const auto& t : theirs)
                  if (there.save(g, t).status != save_status::saved) return 1;
              return 0;
          }) == 0);
    // This process's cached scope is stale: it must see the three.
    CHECK(here.size(g) == 3);
    CHECK(here.save(g, theirs[1]).status == save_status::exact_duplicate);
    CHECK(here.save(g, "Bob plays chess on Fridays").status == save_status::saved);
    CHECK(here.search(g, "").size() == 4);
    CHECK(here.search(g, "西湖").size() == 1);
    // The other process sees this one's, and the cap of 5 holds across both.
    CHECK(in_child([&](auto& there) {
              if (there.size(g) != 4) return 1;
              if (there.save(g, "Bob plays chess on Fridays").status != save_status::exact_duplicate) return 2;
              if (there.save(g, "Carol keeps two cats named Mochi and Yuzu").status != save_status::saved) return 3;
              return there.save(g, "one too many").status == save_status::full ? 0 : 4;
          }) == 0);
    CHECK(here.save(g, "still one too many").status == save_status::full);
    CHECK(here.size(g) == 5);
    // A forget elsewhere is seen too.
    const std::string victim = here.list(g).front().id;
    CHECK(in_child([&](auto& there) { return there.forget(g, victim).ok() ? 0 : 1; }) == 0);
    CHECK_FALSE(here.get(g, victim));
    CHECK(here.size(g) == 4);
}

TEST_CASE("four processes saving into one scope at the same instant never pass the cap or store a duplicate", "[hardening][memory][processes]") {
    using namespace ania::memory;
    ania_test::temp_dir dir;
    const std::string path = dir.file("race.db");
    const scope g = scope::from("g:9");
    { sqlite_backend create(path, quiet()); REQUIRE(create.enabled()); }
    int go[2];
    REQUIRE(pipe(go) == 0);
    std::vector<pid_t> children;
    for (int p = 0; p < 4; ++p) {
        const pid_t child = fork();
        REQUIRE(child >= 0);
        if (child == 0) {
            close(go[1]);
            auto opt = quiet();
            opt.busy_timeout = std::chrono::milliseconds(10000);
            sqlite_backend backend(path, opt);
            manager_options mo;
            mo.log = [](ania::log_level, std::string_view) {};
            mo.max_entries = 60;
            sqlite_manager m(backend, mo);
            (void)m.size(g);  // cached before the race starts
            char c;
            if (read(go[0], &c, 1) != 0) _exit(2);  // all start when the pipe closes
            for (int i = 0; i < 40; ++i) {
                // Distinct facts, and one that every process saves: it must be stored once.
                const std::string text = i % 10 == 0 ? "the shared fact number " + std::to_string(i)
                                                     : "process " + std::to_string(p) + " saw item " + std::to_string(i * 7919 + p);
                const auto st = m.save(g, text).status;
                if (st == save_status::failed || st == save_status::disabled) _exit(3);
            }
            _exit(0);
        }
        children.push_back(child);
    }
    close(go[0]);
    close(go[1]);  // go
    for (const pid_t c : children) {
        int status = 0;
        waitpid(c, &status, 0);
        CHECK(WIFEXITED(status));
        CHECK(WEXITSTATUS(status) == 0);
    }
    CHECK(count(path, "SELECT count(*) FROM ania_memory WHERE scope = 'g:9'") == 60);  // 4 x 40 tried, the cap holds
    CHECK(count(path, "SELECT count(*) FROM (SELECT content FROM ania_memory GROUP BY content HAVING count(*) > 1)") == 0);
}
