// tests/unit/archive.cpp -- non-destructive compaction (#31 part 2) through an agent on a real SQLite file: what
// every compaction removed is in the archive and found by history_search; sessions are isolated (also against
// hostile arguments); the cap and clear; the index follows the store. (The stores' own archive contract is
// the conformance kit's: tests/unit/store.cpp, postgres.cpp.)
#include <catch2/catch.hpp>

#include <atomic>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include <ania/history/archive_search.hpp>
#include <ania/memory/tokenize.hpp>
#include <ania/json.hpp>
#include <ania/store/sqlite_store.hpp>

#include "agent_rig.hpp"
#include "bench_data.hpp"
#include "scripted_client.hpp"
#include "temp_dir.hpp"

using ania::message;
using ania_test::scripted_client;

namespace {

struct traits : ania_test::test_traits {
    using store = ania::sqlite_store;
};
using sqlite_agent = ania::basic_agent<traits>;

/// Two-rune words without a rune in common, one per turn (CJK search is by bigrams and runes).
const std::vector<std::string> topics = {"苹果", "香蕉", "葡萄", "西瓜", "桃子", "草莓", "火车", "飞机", "轮船", "汽车",
                                         "钢琴", "吉他", "小提", "铅笔", "电脑", "手机", "书包", "雨伞", "帽子", "鞋袜",
                                         "老虎", "狮子", "熊猫", "猴儿", "大象", "长颈", "海豚", "鲸鱼", "企鹅", "蝴蝶"};

std::string word(int t) { return "zq" + std::to_string(t) + "x"; }

std::string user_text(int t) {
    return "turn " + word(t) + " about " + topics[static_cast<std::size_t>(t) % topics.size()] + " " + std::string(400, 'a' + t % 26);
}

/// The model: a summary for a compression request (its system message is the summary prompt), else a reply.
scripted_client model_with_summaries() {
    scripted_client m;
    auto n = std::make_shared<int>(0);
    m.otherwise([n](const ania::chat_request& r) {
        const std::vector<message> msgs = r.messages.to_vector();
        if (!msgs.empty() && msgs.front().content == ania::summary_prompt_zh)
            return ania::completion::success(message::assistant("SUMMARY-" + std::to_string(++*n)));
        return ania::completion::success(message::assistant("reply " + std::to_string(msgs.size())));
    });
    return m;
}

std::string call(const ania::tool& t, const std::string& args) { return t.handler(args); }

const ania::tool& named(const std::vector<ania::tool>& tools, std::string_view name) {
    for (const ania::tool& t : tools)
        if (t.name == name) return t;
    throw std::runtime_error("no tool " + std::string(name));
}

} // namespace

TEST_CASE("archive through an agent on SQLite: every message a compaction removed is archived and found", "[archive][agent][sqlite]") {
    ania_test::temp_dir dir;
    ania::sqlite_store store(dir.file("archive.db"));
    ania::background_writer<ania::sqlite_store> writer(store);
    scripted_client model = model_with_summaries();
    ania_test::recorded_events events;
    ania::agent_options opt;
    opt.window.max_context_tokens = 1500;
    opt.archive = true;
    std::vector<message> committed;
    constexpr int turns = 30;
    {
        sqlite_agent a(writer, {.client = model, .events = events, .log = ania_test::capture_log{}}, "g:1", opt);
        for (int t = 0; t < turns; ++t) {
            const ania::chat_result r = a.chat(user_text(t));
            REQUIRE(r.ok());
            committed.insert(committed.end(), r.messages.begin(), r.messages.end());
        }
        writer.flush();
        const auto window = a.window().messages();
        REQUIRE_FALSE(events.compressions->empty());
        std::size_t dropped = 0, archived = 0;
        for (const auto& e : *events.compressions) dropped += e.dropped;
        for (const auto& e : *events.compressions) CHECK(e.status == ania::compress_status::compressed);
        const ania::archive_slice all = store.read_archive("g:1", 0, ania::whole_archive);
        archived = all.messages.size();
        CHECK(all.first_seq == 0);
        CHECK(static_cast<std::size_t>(all.next_seq) == dropped);  // every dropped message, numbered once
        CHECK(archived == dropped);
        // The expectation from what was committed: each message no longer in the window is in the archive.
        std::set<std::string> in_window, in_archive;
        for (const message& m : window) in_window.insert(ania::dump(m));
        for (const auto& m : all.messages) in_archive.insert(ania::dump(m.msg));
        std::size_t removed = 0;
        for (const message& m : committed) {
            if (in_window.count(ania::dump(m))) continue;
            ++removed;
            CHECK(in_archive.count(ania::dump(m)) == 1);
        }
        CHECK(removed > 0);
        // Each compaction's summary is stored with its batch, in order.
        REQUIRE(all.summaries.size() == events.compressions->size());
        CHECK(all.summaries.front().summary.find("SUMMARY-1") != std::string::npos);
        CHECK(all.summaries.front().first_seq == 0);

        // history_search finds each removed user message by its own word, and by its CJK topic.
        ania::archive_index index(writer);
        const std::vector<ania::tool> tools = ania::make_archive_tools(index, "g:1");
        const ania::tool& search = named(tools, "history_search");
        int found = 0;
        for (const auto& m : all.messages) {
            if (m.msg.role != ania::role::user || m.msg.content.rfind("turn zq", 0) != 0) continue;
            const int t = std::stoi(m.msg.content.substr(7));
            const std::string out = call(search, R"({"query":")" + word(t) + R"("})");
            INFO(out);
            CHECK(out.find("#" + std::to_string(m.seq) + " [") != std::string::npos);
            CHECK(out.find(word(t)) != std::string::npos);
            const ania::archive_search_result by_topic = index.search("g:1", topics[static_cast<std::size_t>(t) % topics.size()], 3);
            REQUIRE_FALSE(by_topic.hits.empty());
            CHECK(by_topic.hits.front().seq == m.seq);
            ++found;
        }
        CHECK(found > 0);
        // A word of a message still in the window is not archived.
        CHECK(call(search, R"({"query":")" + word(turns - 1) + R"("})") == ania::archive_tool_replies{}.none);
        // history_get reads a range with the summary of its batch.
        const std::string got = call(named(tools, "history_get"), R"({"from":0,"count":3})");
        CHECK(got.find("SUMMARY-1") != std::string::npos);
        CHECK(got.find("#0 [") != std::string::npos);
        CHECK(got.find("#2 [") != std::string::npos);
        CHECK(got.find("#3 [") == std::string::npos);

        // clear forgets the archive too (the default), and the tools say so.
        a.clear();
        CHECK(call(search, R"({"query":")" + word(0) + R"("})").rfind(ania::archive_tool_replies{}.empty, 0) == 0);
        CHECK(store.read_archive("g:1", 0, ania::whole_archive).messages.empty());
    }
}

TEST_CASE("archive tools: bound to their session, whatever the arguments", "[archive][isolation][bad-input]") {
    ania::ram_store store;
    auto archive = [&](const std::string& session, const std::string& tag, int n) {
        std::vector<message> ms;
        for (int i = 0; i < n; ++i) ms.push_back(message::user(tag + " secret" + std::to_string(i) + " 共享词"));
        store.replace_archiving(session, std::span<const message>{}, {ms, "sum " + tag, "2026-12-05T20:00:00.000000000Z"});
    };
    archive("g:1", "mine", 30);
    archive("g:2", "theirs", 30);
    archive(std::string("g:1\0g:2", 7), "nul", 5);
    ania::archive_index index(store);
    const std::vector<ania::tool> tools = ania::make_archive_tools(index, "g:1");
    const ania::tool& search = named(tools, "history_search");
    const ania::tool& get = named(tools, "history_get");
    const std::vector<std::string> hostile = {
        R"({"query":"theirs"})", R"({"query":"nul"})", R"({"query":"' OR 1=1 --"})", R"({"query":"%"})",
        R"({"query":"共享词","limit":1000000})", R"({"query":"secret1","session":"g:2"})", R"({"query":"g:2"})",
        R"({"from":0,"count":50,"session":"g:2"})", R"({"from":-100,"count":50})", R"({"from":9223372036854775807})",
        R"({"from":18446744073709551615,"count":50})", R"({"from":0,"count":-3})", R"({"from":"0"})", R"({"from":1.5})",
        R"({"query":5})", R"({"query":""})", R"({"query":null})", "not json", "[]", "", R"({"from":0,"count":50)",
        "{\"query\":\"" + std::string(1 << 20, 'q') + "\"}", "{\"query\":\"\xff\xfe\"}"};
    for (const std::string& args : hostile) {
        for (const ania::tool* t : {&search, &get}) {
            const std::string out = t->handler(args);
            INFO(t->name << " " << args.substr(0, 80) << " -> " << out.substr(0, 200));
            CHECK_FALSE(out.empty());
            CHECK(out.find("theirs") == std::string::npos);
            CHECK(out.find("nul") == std::string::npos);
        }
    }
    // Reading the whole range of g:1, 50 at a time, shows only g:1's.
    std::string whole;
    for (int from = 0; from < 40; from += 10) whole += get.handler(R"({"from":)" + std::to_string(from) + R"(,"count":10})");
    for (int i = 0; i < 30; ++i) CHECK(whole.find("mine secret" + std::to_string(i) + " ") != std::string::npos);
    CHECK(whole.find("theirs") == std::string::npos);
    // Bad arguments are answered, not run.
    CHECK(search.handler(R"({"query":5})").rfind("Error: invalid arguments", 0) == 0);
    CHECK(get.handler(R"({"from":"0"})").rfind("Error: invalid arguments", 0) == 0);
    CHECK(get.handler(R"({"count":3})").rfind("Error: invalid arguments", 0) == 0);
}

TEST_CASE("archive_index follows the store: new compactions, the cap, a clear, another index's view", "[archive][index]") {
    ania::ram_store store(ania::archive_options{.max_messages = 10});
    ania::archive_index index(store, 2);
    auto batch = [](int from, int n) {
        std::vector<message> ms;
        for (int i = from; i < from + n; ++i) ms.push_back(message::user("w" + std::to_string(i) + "z common"));
        return ania::archive_batch{ms, "", "2026-12-05T20:00:00.000000000Z"};
    };
    store.replace_archiving("s", std::span<const message>{}, batch(0, 6));
    CHECK(index.search("s", "w0z", 5).hits.size() == 1);
    store.replace_archiving("s", std::span<const message>{}, batch(6, 2));
    CHECK(index.search("s", "w7z", 5).hits.at(0).seq == 7);  // found without a rebuild: read since seq 6
    store.replace_archiving("s", std::span<const message>{}, batch(8, 5));  // 13 > 10: #0..#2 go
    ania::archive_search_result r = index.search("s", "w0z w1z w2z w3z", 10);
    CHECK(r.first_seq == 3);
    REQUIRE(r.hits.size() == 1);
    CHECK(r.hits[0].seq == 3);
    r = index.search("s", "common", 100);
    REQUIRE(r.hits.size() == 10);
    CHECK(r.hits.front().seq == 12);  // equal scores: newest first
    CHECK(r.hits.back().seq == 3);
    store.clear("s");
    CHECK(index.search("s", "common", 100).hits.empty());
    store.replace_archiving("s", std::span<const message>{}, batch(100, 1));
    r = index.search("s", "common", 100);
    REQUIRE(r.hits.size() == 1);
    CHECK(r.hits[0].seq == 13);  // numbers go on after a clear
    // At most two indexes resident; an evicted one is rebuilt on its next search.
    store.replace_archiving("t", std::span<const message>{}, batch(0, 2));
    store.replace_archiving("u", std::span<const message>{}, batch(0, 3));
    CHECK(index.search("t", "common", 9).hits.size() == 2);
    CHECK(index.search("u", "common", 9).hits.size() == 3);
    CHECK(index.resident() == 2);
    CHECK(index.search("s", "w100z", 9).hits.size() == 1);
    CHECK(index.resident() == 2);
}

TEST_CASE("archive_index: searches of many sessions from many threads while compactions land", "[archive][threads]") {
    ania::ram_store store;
    ania::archive_index index(store, 4);
    constexpr int threads = 4, rounds = 50;
    std::atomic<int> missed{0};  // Catch's assertions are not for threads: counted here, checked after
    std::vector<std::thread> pool;
    for (int k = 0; k < threads; ++k)
        pool.emplace_back([&, k] {
            const std::string s = "g:" + std::to_string(k % 2);  // two threads per session
            for (int i = 0; i < rounds; ++i) {
                store.replace_archiving(s, std::span<const message>{},
                                        {{message::user("t" + std::to_string(k) + "r" + std::to_string(i) + " x")}, "", "t"});
                const auto r = index.search(s, "t" + std::to_string(k) + "r" + std::to_string(i), 3);
                if (r.hits.size() != 1) ++missed;
            }
        });
    for (auto& t : pool) t.join();
    CHECK(missed == 0);
    CHECK(index.search("g:0", "x", 1000).hits.size() == 2 * rounds);
}

TEST_CASE("history_search scores as memory_search does: differential against the plain definition, on the data set", "[archive][search]") {
    // The definition (SPEC §4's keyword part): +10 for each distinct term of the tokenised, lower-cased query
    // that the lower-cased text contains. The index answers it with postings, pair filters and searches.
    const ania_test::conversation c = ania_test::load_conversation("history_1k");
    REQUIRE_FALSE(c.history.empty());
    ania::ram_store store(ania::archive_options{.max_messages = 0, .max_bytes = 0});
    store.replace_archiving("s", std::span<const message>{}, {c.history, "", "2026-12-05T20:00:00.000000000Z"});
    ania::archive_index index(store);
    std::vector<std::string> lowered;
    for (const message& m : c.history) lowered.push_back(ania::memory::lower(ania::searchable_text(m)));
    std::vector<std::string> queries;
    for (const std::string& l : ania_test::load_lines("queries")) queries.push_back(ania::parse_json(l).at("query").get<std::string>());
    queries.push_back("Database DATABASE 数据 数据库 x");  // case, repeats, a CJK run of 3, one letter
    std::size_t compared = 0, nonzero = 0;
    for (std::size_t q = 0; q < queries.size(); q += queries.size() / 60 + 1) {
        std::vector<std::string> terms;
        for (const std::string& t : ania::memory::tokenize(queries[q])) terms.push_back(t);
        const ania::archive_search_result r = index.search("s", queries[q], ania::whole_archive);
        std::vector<double> got(c.history.size(), 0);
        for (const auto& h : r.hits) got.at(static_cast<std::size_t>(h.seq)) = h.score;
        for (std::size_t i = 0; i < c.history.size(); ++i) {
            double want = 0;
            for (const std::string& t : terms) want += lowered[i].find(t) != std::string::npos ? 10 : 0;
            INFO("query " << queries[q] << ", message " << i);
            CHECK(got[i] == want);
            nonzero += want > 0;
        }
        // best first, equal scores newest first
        for (std::size_t k = 1; k < r.hits.size(); ++k)
            CHECK((r.hits[k - 1].score > r.hits[k].score || (r.hits[k - 1].score == r.hits[k].score && r.hits[k - 1].seq > r.hits[k].seq)));
        ++compared;
    }
    CHECK(compared >= 30);
    CHECK(nonzero > 0);
    // A limit keeps the best: the same as the head of the whole ranking.
    const auto all = index.search("s", queries[0], ania::whole_archive);
    const auto top = index.search("s", queries[0], 5);
    REQUIRE(top.hits.size() == std::min<std::size_t>(5, all.hits.size()));
    for (std::size_t k = 0; k < top.hits.size(); ++k) CHECK(top.hits[k].seq == all.hits[k].seq);
}
