// tests/unit/history.cpp -- what a turn persists (suffix, persist_user_text, images, incomplete turns),
// loading with repair, and the background writer (order, flush, drain, back-pressure, cancellation).
#include <catch2/catch.hpp>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <mutex>
#include <stop_token>
#include <thread>
#include <vector>

#include <ania/history/background_writer.hpp>
#include <ania/history/persist.hpp>
#include <ania/json.hpp>
#include <ania/store/ram_store.hpp>

using ania::message;

namespace {
message image_user(const std::string& text, const std::string& url) {
    return message::user({ania::content_part::make_text(text), ania::content_part::make_image(url, "high")});
}
} // namespace

TEST_CASE("a turn persists the suffix from its user message", "[history][persist]") {
    const std::vector<message> request = {
        message::system("base prompt"), message::user("old"), message::assistant("old reply"),
        message::user("new question"),
        message::assistant_calls({{"c1", "function", "memory_search", "{}", {}, {}}}),
        message::tool_result("c1", "hits"), message::assistant("answer")};
    const auto turn = ania::persisted_turn(request, 3);
    REQUIRE(turn.size() == 4);
    CHECK(turn[0] == request[3]);
    CHECK(turn[3] == request[6]);
    CHECK(ania::persisted_turn(request, 99).empty());
}

TEST_CASE("persist_user_text keeps the original text, not this turn's injections", "[history][persist]") {
    const std::string injected = "【记忆】小明喜欢美式\n【提醒】周五交报告\n\n小明：我喜欢什么？";
    const std::vector<message> request = {message::user(injected), message::assistant("美式")};
    const auto turn = ania::persisted_turn(request, 0, std::string("小明：我喜欢什么？"));
    CHECK(turn[0].content == "小明：我喜欢什么？");
    CHECK(turn[1] == request[1]);
    CHECK(request[0].content == injected);  // the request itself is untouched
    // With images: the original text replaces the text parts; the images stay, as markers.
    const std::vector<message> with_image = {image_user("injected + question", "https://q.qq.com/a.jpg"), message::assistant("ok")};
    const auto t2 = ania::persisted_turn(with_image, 0, std::string("question"));
    REQUIRE(t2[0].parts.size() == 2);
    CHECK(t2[0].parts[0].text == "question");
    CHECK(t2[0].parts[1].text == "[图片 " + ania::text::short_hash("https://q.qq.com/a.jpg") + "]");
}

TEST_CASE("make_turn_copies: the window's copy and the store's differ only in images; neither holds injections", "[history][persist]") {
    const std::string url = "https://q.qq.com/b.jpg";
    const std::vector<message> request = {
        message::system("base prompt"), message::user("old"), message::assistant("old reply"),
        image_user("【相关记忆】- [1a2b3c4d] 小明喜欢美式\n\n这是什么？", url),
        message::assistant_calls({{"c1", "function", "memory_search", "{}", {}, {}}, {"c2", "function", "ocr", "{}", {}, {}}}),
        message::tool_result("c1", "hits")};  // cut off before c2 was answered
    const ania::turn_copies t = ania::make_turn_copies(request, 3, std::string("这是什么？"));
    REQUIRE(t.window.size() == t.stored.size());  // aligned: a later drop_front(k) means the same k in both
    REQUIRE(t.window.size() == 4);
    // The window keeps the original text and the image; the store the original text and the marker.
    REQUIRE(t.window[0].parts.size() == 2);
    CHECK(t.window[0].parts[0].text == "这是什么？");
    CHECK(t.window[0].parts[1].type == ania::content_part::kind::image_url);
    CHECK(t.window[0].parts[1].url == url);
    REQUIRE(t.stored[0].parts.size() == 2);
    CHECK(t.stored[0].parts[0].text == "这是什么？");
    CHECK(t.stored[0].parts[1].text == "[图片 " + ania::text::short_hash(url) + "]");
    // Both repaired the same way; everything but the image is equal.
    CHECK(ania::is_valid_transcript(t.window));
    CHECK(t.window[3] == message::tool_result("c2", "[cancelled]"));
    for (std::size_t i = 1; i < t.window.size(); ++i) CHECK(t.window[i] == t.stored[i]);
    CHECK(ania::persisted_turn(request, 3, std::string("这是什么？")) == t.stored);
    // A window fed with the window copy never replays the injection.
    for (const auto& m : t.window) CHECK(ania::dump(m).find("相关记忆") == std::string::npos);
}

TEST_CASE("images become [图片 <hash>] markers in the persisted copy only", "[history][persist]") {
    const std::string data_uri = "data:image/png;base64," + std::string(100000, 'A');
    const std::vector<message> request = {image_user("看图", data_uri), message::assistant("一只猫")};
    const auto turn = ania::persisted_turn(request, 0);
    REQUIRE(turn[0].parts.size() == 2);
    CHECK(turn[0].parts[1].type == ania::content_part::kind::text);
    CHECK(turn[0].parts[1].text == "[图片 " + ania::text::sha256_hex(data_uri).substr(0, 8) + "]");
    CHECK(ania::dump(turn[0]).size() < 200);  // the row does not carry the megabytes
    CHECK(request[0].parts[1].type == ania::content_part::kind::image_url);  // memory keeps the image
    ania::persist_options english;
    english.image_marker = "[image {hash}]";
    CHECK(ania::persisted_turn(request, 0, std::nullopt, english)[0].parts[1].text.rfind("[image ", 0) == 0);
}

TEST_CASE("an incomplete turn is stored repaired, never with unanswered calls", "[history][persist]") {
    const std::vector<message> cut = {message::user("查天气"),
                                      message::assistant_calls({{"c1", "function", "weather", "{}", {}, {}}, {"c2", "function", "time", "{}", {}, {}}}),
                                      message::tool_result("c1", "晴")};
    const auto turn = ania::persisted_turn(cut, 0);
    CHECK(ania::is_valid_transcript(turn));
    REQUIRE(turn.size() == 4);
    CHECK(turn[3] == message::tool_result("c2", "[cancelled]"));
    ania::persist_options drop;
    drop.incomplete.unanswered = ania::unanswered_call_policy::drop_calls;
    const auto dropped = ania::persisted_turn(cut, 0, std::nullopt, drop);
    CHECK(ania::is_valid_transcript(dropped));
    CHECK(dropped[1].tool_calls.size() == 1);
}

TEST_CASE("load_history repairs what it loads and survives a failing store", "[history][persist]") {
    ania::ram_store store;
    store.append("s", std::vector<message>{message::tool_result("gone", "orphan"), message::user("u")});
    std::vector<std::string> logged;
    const ania::log_sink sink = [&](ania::log_level, std::string_view t) { logged.emplace_back(t); };
    const auto h = ania::load_history(store, "s", sink);
    REQUIRE(h.size() == 1);
    CHECK(h[0] == message::user("u"));
    CHECK(logged.size() == 1);
    struct failing : ania::ram_store {
        std::vector<message> load(std::string_view) const { throw ania::error(ania::errc::store_error, "disk I/O error"); }
    } broken;
    CHECK(ania::load_history(broken, "s", sink).empty());
    CHECK(logged.back().find("disk I/O error") != std::string::npos);
}

static_assert(ania::history_store<ania::background_writer<ania::ram_store>>);
static_assert(ania::prefix_dropping_store<ania::background_writer<ania::ram_store>>);
static_assert(!ania::prefix_dropping_store<ania::background_writer<ania::null_store>>);  // only when the store can

TEST_CASE("background writer: drop_front is queued behind the appends before it", "[history][writer]") {
    struct gated : ania::ram_store {
        std::atomic<bool> open{false};
        void append(std::string_view s, std::span<const message> m) {
            while (!open) std::this_thread::sleep_for(std::chrono::milliseconds(1));
            ania::ram_store::append(s, m);
        }
    } store;
    ania::background_writer<gated> w(store);
    w.append("s", std::vector<message>{message::user("1"), message::assistant("2"), message::user("3"), message::assistant("4")});
    w.drop_front("s", 2);  // run directly, it would find nothing to drop yet
    store.open = true;
    w.flush();
    CHECK(store.load("s") == std::vector<message>{message::user("3"), message::assistant("4")});
}

TEST_CASE("background writer: it is a history store, so maybe_compress's replace queues behind pending appends", "[history][writer]") {
    struct slow : ania::ram_store {
        void append(std::string_view s, std::span<const message> m) {
            std::this_thread::sleep_for(std::chrono::milliseconds(20));
            ania::ram_store::append(s, m);
        }
    } store;
    ania::background_writer<slow> w(store);
    const std::vector<message> turn = {message::user("u"), message::assistant("a")};
    w.append("s", turn);  // still being written when the replace arrives
    w.replace("s", std::vector<message>{message::user("summary")});
    CHECK(w.load("s") == std::vector<message>{message::user("summary")});  // load waits for both, in order
}

TEST_CASE("background writer: order per session, flush, and drain on destruction", "[history][writer]") {
    ania::ram_store store;
    {
        ania::background_writer<ania::ram_store> w(store);
        for (int i = 0; i < 200; ++i) {
            w.append("a", {message::user("a" + std::to_string(i))});
            w.append("b", {message::user("b" + std::to_string(i))});
        }
        w.flush();
        CHECK(store.load("a").size() == 200);
        w.replace("a", {message::user("summary")});
        w.append("a", {message::user("after")});
        w.clear("b");
    }  // destruction drains
    const auto a = store.load("a");
    REQUIRE(a.size() == 2);
    CHECK(a[0].content == "summary");
    CHECK(a[1].content == "after");
    CHECK(store.load("b").empty());
}

TEST_CASE("background writer: a flush writes what is queued itself, one job at a time, in order", "[history][writer][threads]") {
    // Records which thread wrote each job, and how many writes ran at once.
    struct recording : ania::ram_store {
        std::mutex m;
        std::vector<std::thread::id> by;
        int inside = 0, most = 0;
        void append(std::string_view s, std::span<const message> msgs) {
            {
                std::lock_guard l(m);
                most = std::max(most, ++inside);
                by.push_back(std::this_thread::get_id());
            }
            ania::ram_store::append(s, msgs);
            std::lock_guard l(m);
            --inside;
        }
    } store;
    bool each_flushed = true;
    {
        ania::background_writer<recording> w(store);
        // Append, then flush, 500 times from this thread: the writer thread has to be woken first, so the flush
        // finds its job still queued (some of the time, at least) and writes it here. Either way the job is in
        // the store when flush returns.
        for (std::size_t i = 0; i < 500; ++i) {
            w.append("main", {message::user(std::to_string(i))});
            w.flush();
            each_flushed = each_flushed && store.load("main").size() == i + 1;
        }
        // Four threads at once, each its own session, flushing now and then: still one write at a time, in order.
        std::vector<std::thread> threads;
        for (int t = 0; t < 4; ++t)
            threads.emplace_back([&w, session = "t" + std::to_string(t)] {
                for (int i = 0; i < 200; ++i) {
                    w.append(session, {message::user(std::to_string(i))});
                    if (i % 3 == 0) w.flush();
                }
            });
        for (auto& th : threads) th.join();
    }  // the rest drained by the destructor
    // flush_writes off: a flush only waits, every job is the writer thread's.
    {
        ania::background_writer_options opt;
        opt.flush_writes = false;
        ania::background_writer<recording> w(store, opt);
        for (std::size_t i = 0; i < 200; ++i) {
            w.append("waits", {message::user(std::to_string(i))});
            w.flush();
            each_flushed = each_flushed && store.load("waits").size() == i + 1;
        }
    }
    CHECK(each_flushed);
    REQUIRE(store.by.size() == 500 + 4 * 200 + 200);
    CHECK(std::count(store.by.end() - 200, store.by.end(), std::this_thread::get_id()) == 0);
    CHECK(std::count(store.by.begin(), store.by.begin() + 500, std::this_thread::get_id()) > 0);  // 0 when only the thread writes
    CHECK(store.most == 1);
    for (int t = 0; t < 4; ++t) {
        const auto h = store.load("t" + std::to_string(t));
        REQUIRE(h.size() == 200);
        for (int i = 0; i < 200; ++i) CHECK(h[static_cast<std::size_t>(i)].content == std::to_string(i));
    }
}

TEST_CASE("background writer: failures are logged and counted, later writes still happen", "[history][writer]") {
    struct flaky : ania::ram_store {
        std::atomic<int> calls{0};
        void append(std::string_view s, std::span<const message> m) {
            if (calls++ == 1) throw ania::error(ania::errc::store_error, "database or disk is full");
            ania::ram_store::append(s, m);
        }
    } store;
    std::vector<std::string> logged;
    std::mutex log_mutex;
    ania::background_writer_options opt;
    opt.log = [&](ania::log_level, std::string_view t) { std::lock_guard l(log_mutex); logged.emplace_back(t); };
    ania::background_writer<flaky> w(store, opt);
    for (int i = 0; i < 3; ++i) w.append("s", {message::user(std::to_string(i))});
    w.flush();
    CHECK(w.failures() == 1);
    REQUIRE(logged.size() == 1);
    CHECK(logged[0].find("disk is full") != std::string::npos);
    const auto h = store.load("s");
    REQUIRE(h.size() == 2);
    CHECK(h[1].content == "2");
}

TEST_CASE("background writer: a full queue blocks the producer until there is room", "[history][writer]") {
    struct slow : ania::ram_store {
        std::atomic<bool> open{false};
        void append(std::string_view s, std::span<const message> m) {
            while (!open) std::this_thread::sleep_for(std::chrono::milliseconds(1));
            ania::ram_store::append(s, m);
        }
    } store;
    ania::background_writer_options opt;
    opt.max_queued = 2;
    ania::background_writer<slow> w(store, opt);
    std::atomic<int> submitted{0};
    std::thread producer([&] {
        for (int i = 0; i < 6; ++i) {
            w.append("s", {message::user(std::to_string(i))});
            ++submitted;
        }
    });
    // One job is being written (the store blocks it) and two wait: the producer gets that far, and no further.
    for (int waited = 0; submitted.load() < 3 && waited < 5000; ++waited) std::this_thread::sleep_for(std::chrono::milliseconds(1));
    CHECK(submitted.load() == 3);
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    CHECK(submitted.load() == 3);  // still blocked
    CHECK(w.queued() == 2);
    store.open = true;
    producer.join();
    w.flush();
    CHECK(store.load("s").size() == 6);
}

TEST_CASE("background writer: a request cancelled right after its turn still has the turn persisted", "[history][writer]") {
    struct gated : ania::ram_store {  // writes only once the test opens the gate
        std::atomic<bool> open{false};
        std::atomic<int> writes{0};
        void append(std::string_view s, std::span<const message> m) {
            while (!open) std::this_thread::sleep_for(std::chrono::milliseconds(1));
            ania::ram_store::append(s, m);
            ++writes;
        }
    } store;
    ania::background_writer<gated> w(store);
    std::atomic<bool> handed_over{false};
    int rounds_after_stop = 0;
    {
        std::jthread request([&](std::stop_token stop) {
            std::vector<message> req = {message::user("hi"), message::assistant("hello")};
            w.append("s", ania::persisted_turn(req, 0));
            handed_over = true;
            while (!stop.stop_requested()) std::this_thread::sleep_for(std::chrono::milliseconds(1));
            ++rounds_after_stop;  // the request saw /stop and ends; its messages die with it
            req.assign(2, message::user("overwritten"));
        });
        while (!handed_over) std::this_thread::sleep_for(std::chrono::milliseconds(1));
        request.request_stop();  // /stop, while the write is still in flight
    }  // joined: the request is gone
    CHECK(rounds_after_stop == 1);
    CHECK(store.writes.load() == 0);  // the store had not written the turn when the request ended
    store.open = true;
    w.flush();
    CHECK(store.load("s") == std::vector<message>{message::user("hi"), message::assistant("hello")});
}
