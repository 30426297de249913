// tests/unit/store.cpp -- the history store conformance suite over every shipped store, and SQLite specifics.
#include <catch2/catch.hpp>

#include <memory>

#include <ania/store/ram_store.hpp>
#ifdef ANIA_TEST_SQLITE
#include <ania/store/sqlite_store.hpp>
#include <sqlite3.h>
#endif

#include <ania/history/background_writer.hpp>
#include <ania/testing/history_store.hpp>

#include "temp_dir.hpp"

namespace ania::testing {
/// The writer in front of a store: loads flush first, so it conforms like the store itself.
template <>
struct store_fixture<ania::background_writer<ania::ram_store>> {
    ania::ram_store inner;
    std::vector<std::unique_ptr<ania::ram_store>> archiving;  // outlive the writers made over them
    std::unique_ptr<ania::background_writer<ania::ram_store>> make() {
        return std::make_unique<ania::background_writer<ania::ram_store>>(inner);
    }
    std::unique_ptr<ania::background_writer<ania::ram_store>> make_archiving(const ania::archive_options& a) {
        archiving.push_back(std::make_unique<ania::ram_store>(a));
        return std::make_unique<ania::background_writer<ania::ram_store>>(*archiving.back());
    }
};
#ifdef ANIA_TEST_SQLITE
template <>
struct store_fixture<ania::sqlite_store> {
    ania_test::temp_dir dir;
    int files = 0;
    std::unique_ptr<ania::sqlite_store> make() { return std::make_unique<ania::sqlite_store>(dir.file("history.db")); }
    std::unique_ptr<ania::sqlite_store> reopen() { return make(); }
    std::unique_ptr<ania::sqlite_store> make_archiving(const ania::archive_options& a) {
        ania::sqlite_store_options o;
        o.archive = a;
        return std::make_unique<ania::sqlite_store>(dir.file("archive" + std::to_string(files++) + ".db"), o);
    }
};
template <>
struct store_capabilities<ania::sqlite_store> : default_store_capabilities<ania::sqlite_store> {
    static constexpr bool persists = true;
};
#endif
} // namespace ania::testing

using shipped_stores = std::tuple<ania::ram_store, ania::background_writer<ania::ram_store>
#ifdef ANIA_TEST_SQLITE
                                  , ania::sqlite_store
#endif
                                  >;
ANIA_TEST_HISTORY_STORES(shipped_stores)

TEST_CASE("the null store keeps nothing", "[store]") {
    ania::null_store s;
    s.append("s", ania::testing::sample_turn("1"));
    CHECK(s.load("s").empty());
}

#ifdef ANIA_TEST_SQLITE
namespace {
std::vector<std::string> column_names(sqlite3* db, const char* table) {
    std::vector<std::string> out;
    sqlite3_stmt* st = nullptr;
    sqlite3_prepare_v2(db, (std::string("PRAGMA table_info(") + table + ")").c_str(), -1, &st, nullptr);
    while (sqlite3_step(st) == SQLITE_ROW) out.emplace_back(reinterpret_cast<const char*>(sqlite3_column_text(st, 1)));
    sqlite3_finalize(st);
    return out;
}
} // namespace

TEST_CASE("sqlite store: the tables are exactly the spec's, persisted across reopen", "[store][sqlite]") {
    ania_test::temp_dir dir;
    const std::string path = dir.file("h.db");
    {
        ania::sqlite_store s(path);
        REQUIRE(s.enabled());
        s.append("g:1", ania::testing::sample_turn("1"));
    }
    ania::sqlite_store again(path);
    CHECK(again.load("g:1") == ania::testing::sample_turn("1"));
    sqlite3* db = nullptr;
    REQUIRE(sqlite3_open(path.c_str(), &db) == SQLITE_OK);
    CHECK(column_names(db, "ania_chat_session") == std::vector<std::string>{"session_id", "msg_count", "created_at", "updated_at"});
    CHECK(column_names(db, "ania_chat_message") == std::vector<std::string>{"session_id", "seq", "role", "content", "created_at"});
    sqlite3_stmt* st = nullptr;
    sqlite3_prepare_v2(db, "SELECT msg_count, (SELECT count(*) FROM ania_chat_message), (SELECT max(seq) FROM ania_chat_message), "
                           "(SELECT group_concat(role) FROM ania_chat_message) FROM ania_chat_session", -1, &st, nullptr);
    REQUIRE(sqlite3_step(st) == SQLITE_ROW);
    CHECK(sqlite3_column_int(st, 0) == 4);
    CHECK(sqlite3_column_int(st, 1) == 4);
    CHECK(sqlite3_column_int(st, 2) == 3);
    CHECK(std::string(reinterpret_cast<const char*>(sqlite3_column_text(st, 3))) == "user,assistant,tool,assistant");
    sqlite3_finalize(st);
    sqlite3_prepare_v2(db, "PRAGMA journal_mode", -1, &st, nullptr);
    REQUIRE(sqlite3_step(st) == SQLITE_ROW);
    CHECK(std::string(reinterpret_cast<const char*>(sqlite3_column_text(st, 0))) == "wal");
    sqlite3_finalize(st);
    sqlite3_close(db);
}

TEST_CASE("sqlite store: drop_front keeps the survivors' seq; msg_count stays the allocator; replace renumbers", "[store][sqlite]") {
    ania_test::temp_dir dir;
    const std::string path = dir.file("h.db");
    ania::sqlite_store s(path);
    std::vector<ania::message> h;
    for (int i = 0; i < 10; ++i) h.push_back(ania::message::user("m" + std::to_string(i)));
    s.append("g:1", h);
    s.drop_front("g:1", 4);
    const auto query = [&](const char* sql) {
        sqlite3* db = nullptr;
        REQUIRE(sqlite3_open(path.c_str(), &db) == SQLITE_OK);
        sqlite3_stmt* st = nullptr;
        REQUIRE(sqlite3_prepare_v2(db, sql, -1, &st, nullptr) == SQLITE_OK);
        std::string out;
        while (sqlite3_step(st) == SQLITE_ROW) out += (out.empty() ? "" : ",") + std::to_string(sqlite3_column_int64(st, 0));
        sqlite3_finalize(st);
        sqlite3_close(db);
        return out;
    };
    CHECK(query("SELECT seq FROM ania_chat_message ORDER BY seq") == "4,5,6,7,8,9");
    CHECK(query("SELECT msg_count FROM ania_chat_session") == "10");
    s.append("g:1", std::span(h).first(2));  // after the survivors
    CHECK(query("SELECT seq FROM ania_chat_message ORDER BY seq") == "4,5,6,7,8,9,10,11");
    std::vector<ania::message> want(h.begin() + 4, h.end());
    want.insert(want.end(), h.begin(), h.begin() + 2);
    CHECK(s.load("g:1") == want);
    s.drop_front("g:1", 7);
    CHECK(s.load("g:1") == std::vector<ania::message>{h[1]});
    s.drop_front("g:1", 100);  // more than there are: all go
    CHECK(s.load("g:1").empty());
    s.append("g:1", std::span(h).first(3));
    s.replace("g:1", std::span(h).first(2));
    CHECK(query("SELECT seq FROM ania_chat_message ORDER BY seq") == "0,1");
    CHECK(query("SELECT msg_count FROM ania_chat_session") == "2");
}

TEST_CASE("sqlite store: a garbage file disables persistence and is left byte-identical", "[store][sqlite]") {
    ania_test::temp_dir dir;
    const std::string path = dir.file("garbage.db");
    const std::string garbage(8192, '\x5A');
    { FILE* f = std::fopen(path.c_str(), "wb"); std::fwrite(garbage.data(), 1, garbage.size(), f); std::fclose(f); }
    std::vector<std::string> logged;
    ania::sqlite_store_options opt;
    opt.log = [&](ania::log_level l, std::string_view t) { if (l == ania::log_level::error) logged.emplace_back(t); };
    ania::sqlite_store s(path, opt);
    CHECK_FALSE(s.enabled());
    REQUIRE(logged.size() == 1);
    CHECK(logged[0].find("DISABLED") != std::string::npos);
    s.append("s", ania::testing::sample_turn("1"));
    CHECK(s.load("s").empty());
    FILE* f = std::fopen(path.c_str(), "rb");
    std::string after(garbage.size() + 16, '\0');
    after.resize(std::fread(after.data(), 1, after.size(), f));
    std::fclose(f);
    CHECK(after == garbage);
}

TEST_CASE("sqlite store: a row that does not parse is skipped and logged, the others load", "[store][sqlite]") {
    ania_test::temp_dir dir;
    const std::string path = dir.file("h.db");
    std::vector<std::string> warnings;
    ania::sqlite_store_options opt;
    opt.log = [&](ania::log_level l, std::string_view t) { if (l == ania::log_level::warn) warnings.emplace_back(t); };
    ania::sqlite_store s(path, opt);
    s.append("s", ania::testing::sample_turn("1"));
    sqlite3* db = nullptr;
    sqlite3_open(path.c_str(), &db);
    sqlite3_exec(db, "INSERT INTO ania_chat_message VALUES('s', 4, 'user', '{not json', 'x');"
                     "INSERT INTO ania_chat_message VALUES('s', 5, 'user', '{\"role\":\"wizard\",\"content\":\"x\"}', 'x');"
                     "INSERT INTO ania_chat_message VALUES('s', 6, 'user', '[1,2,3]', 'x');"
                     "INSERT INTO ania_chat_message VALUES('s', 7, 'user', '{\"role\":\"user\",\"content\":\"last\"}', 'x');",
                 nullptr, nullptr, nullptr);
    sqlite3_close(db);
    const auto back = s.load("s");
    REQUIRE(back.size() == 5);
    CHECK(back[4] == ania::message::user("last"));
    CHECK(warnings.size() == 3);
}
#endif
