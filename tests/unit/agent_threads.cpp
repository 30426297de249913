// tests/unit/agent_threads.cpp -- basic_agent where threads meet: a /stop from another thread, sessions of
// one writer on several threads. Apart from agent.cpp so that the ThreadSanitizer build compiles only these.
#include <catch2/catch.hpp>

#include <chrono>
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
