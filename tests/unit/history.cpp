// tests/unit/history.cpp -- what a turn persists (suffix, persist_user_text, images, incomplete turns),
// loading with repair, and the background writer (order, flush, drain, back-pressure, cancellation).
#include <catch2/catch.hpp>

#include <atomic>
#include <chrono>
#include <stop_token>
#include <thread>

#include <ania/history/background_writer.hpp>
#include <ania/history/persist.hpp>
#include <ania/json.hpp>
#include <ania/store/memory_store.hpp>

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
    ania::memory_store store;
    store.append("s", std::vector<message>{message::tool_result("gone", "orphan"), message::user("u")});
    std::vector<std::string> logged;
    const ania::log_sink sink = [&](ania::log_level, std::string_view t) { logged.emplace_back(t); };
    const auto h = ania::load_history(store, "s", sink);
    REQUIRE(h.size() == 1);
    CHECK(h[0] == message::user("u"));
    CHECK(logged.size() == 1);
    struct failing : ania::memory_store {
        std::vector<message> load(std::string_view) const { throw ania::error(ania::errc::store_error, "disk I/O error"); }
    } broken;
    CHECK(ania::load_history(broken, "s", sink).empty());
    CHECK(logged.back().find("disk I/O error") != std::string::npos);
}

static_assert(ania::history_store<ania::background_writer<ania::memory_store>>);

TEST_CASE("background writer: it is a history store, so maybe_compress's replace queues behind pending appends", "[history][writer]") {
    struct slow : ania::memory_store {
        void append(std::string_view s, std::span<const message> m) {
            std::this_thread::sleep_for(std::chrono::milliseconds(20));
            ania::memory_store::append(s, m);
        }
    } store;
    ania::background_writer<slow> w(store);
    const std::vector<message> turn = {message::user("u"), message::assistant("a")};
    w.append("s", turn);  // still being written when the replace arrives
    w.replace("s", std::vector<message>{message::user("summary")});
    CHECK(w.load("s") == std::vector<message>{message::user("summary")});  // load waits for both, in order
}

TEST_CASE("background writer: order per session, flush, and drain on destruction", "[history][writer]") {
    ania::memory_store store;
    {
        ania::background_writer<ania::memory_store> w(store);
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

TEST_CASE("background writer: failures are logged and counted, later writes still happen", "[history][writer]") {
    struct flaky : ania::memory_store {
        std::atomic<int> calls{0};
        void append(std::string_view s, std::span<const message> m) {
            if (calls++ == 1) throw ania::error(ania::errc::store_error, "database or disk is full");
            ania::memory_store::append(s, m);
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
    struct slow : ania::memory_store {
        std::atomic<bool> open{false};
        void append(std::string_view s, std::span<const message> m) {
            while (!open) std::this_thread::sleep_for(std::chrono::milliseconds(1));
            ania::memory_store::append(s, m);
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
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
    CHECK(submitted.load() <= 3);  // one being written + two queued; the producer waits
    CHECK(w.queued() <= 2);
    store.open = true;
    producer.join();
    w.flush();
    CHECK(store.load("s").size() == 6);
}

TEST_CASE("background writer: a request cancelled right after its turn still has the turn persisted", "[history][writer]") {
    struct slow : ania::memory_store {
        void append(std::string_view s, std::span<const message> m) {
            std::this_thread::sleep_for(std::chrono::milliseconds(50));
            ania::memory_store::append(s, m);
        }
    } store;
    ania::background_writer<slow> w(store);
    std::stop_source stop;
    std::jthread request([&](std::stop_token) {
        const std::vector<message> req = {message::user("hi"), message::assistant("hello")};
        w.append("s", ania::persisted_turn(req, 0));
        stop.request_stop();  // /stop arrives right after the turn was produced
    });
    request.join();
    CHECK(stop.stop_requested());
    w.flush();
    CHECK(store.load("s").size() == 2);
}
