// tests/unit/agent_threads.cpp -- basic_agent where threads meet: a /stop from another thread, sessions of
// one writer on several threads. Apart from agent.cpp so that the ThreadSanitizer build compiles only these.
#include <catch2/catch.hpp>

#include <atomic>
#include <chrono>
#include <memory>
#include <stop_token>
#include <string>
#include <thread>
#include <vector>

#include <ania/ania.hpp>

#include "agent_rig.hpp"
#include "scripted_client.hpp"

using ania::message;
using ania_test::rig;
using ania_test::scripted_client;
using ania_test::test_traits;

TEST_CASE("a /stop from another thread while the client is waiting ends the turn as cancelled", "[agent][cancel][threads]") {
    rig r;
    r.model.respond([](const ania::chat_request& req) {
        // A real client polls its transfer; this one waits for the stop token (bounded, so a bug cannot hang).
        for (int i = 0; i < 5000 && !req.stop.stop_requested(); ++i) std::this_thread::sleep_for(std::chrono::milliseconds(1));
        return req.stop.stop_requested() ? ania::completion::failure("aborted: cancelled") : ania::completion::success(message::assistant("late"));
    });
    auto a = r.make();
    std::stop_source stop;
    std::thread stopper([&] {
        std::this_thread::sleep_for(std::chrono::milliseconds(30));
        stop.request_stop();
    });
    const auto res = a.chat("wait", {}, stop.get_token());
    stopper.join();
    CHECK(res.end == ania::turn_end::cancelled);
    CHECK_FALSE(res.committed());
    CHECK(r.stored().empty());
}


TEST_CASE("agents of different sessions on one writer, from several threads at once", "[agent][threads]") {
    ania::ram_store store;
    ania::background_writer<ania::ram_store> writer(store);
    constexpr int sessions = 4, turns = 50;
    std::vector<std::thread> threads;
    std::vector<std::vector<message>> windows(sessions);
    std::vector<int> replied(sessions, 0);  // Catch2 v2 assertions are not thread-safe: checked after the join
    for (int s = 0; s < sessions; ++s)
        threads.emplace_back([&, s] {
            scripted_client model;
            model.otherwise("ok " + std::to_string(s));
            ania::basic_agent<test_traits> a(writer, {.client = model}, "g:" + std::to_string(s));
            for (int t = 0; t < turns; ++t) replied[s] += a.chat("turn " + std::to_string(t)).ok();
            windows[s].assign(a.window().messages().begin(), a.window().messages().end());
        });
    for (auto& t : threads) t.join();
    writer.flush();
    for (int s = 0; s < sessions; ++s) {
        CHECK(replied[s] == turns);
        const auto stored = store.load("g:" + std::to_string(s));
        REQUIRE(stored.size() == 2 * turns);
        CHECK(stored == windows[s]);
        CHECK(stored[2 * turns - 1].content == "ok " + std::to_string(s));
    }
}

TEST_CASE("one summary_breaker shared by the sessions of 8 threads: it opens once the summaries fail, no call while open", "[agent][threads][breaker]") {
    // SCRIPTED model: the turns answer with a large reported prompt (so every turn compresses), the summary
    // requests (no base prompt) fail, as a compression model that is down.
    std::atomic<int> summary_calls{0};
    scripted_client model;
    model.otherwise([&](const ania::chat_request& req) -> ania::completion {
        const auto msgs = req.messages.to_vector();
        if (msgs.empty() || msgs[0].content != "base") {
            ++summary_calls;
            return ania::completion::failure("compression model down");
        }
        return ania::completion::success(message::assistant("ok"), {900, 5, 905, {}});
    });
    auto breaker = std::make_shared<ania::summary_breaker>(4, std::chrono::hours(1));
    ania::summary_options so;
    so.breaker = breaker;
    ania::agent_options opt;
    opt.system_prompt = "base";
    opt.window.max_context_tokens = 1000;  // 900 > 0.8 x 1000: the next turn compresses
    opt.summary = std::make_shared<const ania::summary_options>(so);
    const auto shared = std::make_shared<const ania::agent_options>(opt);
    ania::ram_store store;
    ania::background_writer<ania::ram_store> writer(store);
    std::vector<std::thread> threads;
    std::atomic<int> failed_turns{0};
    for (int t = 0; t < 8; ++t) {
        threads.emplace_back([&, t] {
            ania_test::test_agent a(writer, {.client = model, .log = ania_test::capture_log{}}, shared, "g:" + std::to_string(t));
            for (int k = 0; k < 20; ++k)
                if (!a.chat("turn " + std::to_string(k)).ok()) ++failed_turns;
        });
    }
    for (auto& th : threads) th.join();
    CHECK(failed_turns == 0);  // truncation ran instead: no turn is lost to the down summariser
    CHECK(breaker->is_open());
    // Once open, no summary is attempted: at most the 4 that opened it, and the ones already in flight (one per
    // thread) when it opened.
    CHECK(summary_calls.load() >= 4);
    CHECK(summary_calls.load() <= 4 + 8);
}
