// tests/unit/session.cpp -- the session cache (SPEC §3): eviction with a manual clock, safe eviction, the
// queue of messages that arrive while a session responds, /stop, group auto-clear, and real threads.
// The model is SCRIPTED (no LLM here).
#include <catch2/catch.hpp>

#include <algorithm>
#include <array>
#include <atomic>
#include <functional>
#include <latch>
#include <limits>
#include <chrono>
#include <condition_variable>
#include <cstring>
#include <memory>
#include <mutex>
#include <numeric>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "sanitizers.hpp"
#ifdef ANIA_TEST_ASAN
#include <sanitizer/asan_interface.h>
#endif

#include <ania/ania.hpp>
#include <ania/json.hpp>  // the tools' JSON schemas (compiled mode: not in the umbrella)
#include <ania/session/manual_clock.hpp>
#include <ania/session/session_cache.hpp>
#include <ania/testing/eviction.hpp>

using ania::message;
using namespace std::chrono_literals;

namespace {

/// A thread-safe SCRIPTED model: answers "re: <last user text>", counts the user lines it was sent, and can
/// be held inside a call (to test what happens while a session responds).
struct gate_state {
    std::mutex m;
    std::condition_variable cv;
    bool hold = false;      // calls wait while true
    int inside = 0;         // calls currently waiting
    std::atomic<int> lines{0}, calls{0};
};
struct gated_client {
    std::shared_ptr<gate_state> g = std::make_shared<gate_state>();
    ania::completion complete(const ania::chat_request& req) {
        ++g->calls;
        const std::string text = req.messages.back().text();
        g->lines += 1 + static_cast<int>(std::count(text.begin(), text.end(), '\n'));
        std::unique_lock l(g->m);
        ++g->inside;
        g->cv.notify_all();
        g->cv.wait(l, [&] { return !g->hold; });
        --g->inside;
        return ania::completion::success(message::assistant("re: " + text), {100, 10, 110, {}});
    }
    void hold() {
        std::lock_guard l(g->m);
        g->hold = true;
    }
    void release() {
        {
            std::lock_guard l(g->m);
            g->hold = false;
        }
        g->cv.notify_all();
    }
    void wait_inside(int n = 1) {
        std::unique_lock l(g->m);
        g->cv.wait(l, [&] { return g->inside >= n; });
    }
};

struct quiet_log {
    void operator()(ania::log_level, std::string_view) const {}
};
struct traits : ania::default_agent_traits {
    using client = gated_client;
    using log = quiet_log;
};
using agent_t = ania::basic_agent<traits>;
using cache_t = ania::session_cache<agent_t, ania::idle_then_lru, ania::manual_clock>;

struct rig {
    ania::ram_store store;
    ania::background_writer<ania::ram_store> writer{store};
    gated_client model;
    ania::manual_clock clock;
    std::shared_ptr<std::vector<std::pair<std::string, ania::evict_reason>>> evicted =
        std::make_shared<std::vector<std::pair<std::string, ania::evict_reason>>>();

    ania::session_options options(ania::session_limits limits = {}) {
        ania::session_options o;
        o.limits = limits;
        o.janitor = false;
        o.on_evicted = [ev = evicted](std::string_view k, ania::evict_reason r) { ev->emplace_back(k, r); };
        o.log = [](ania::log_level, std::string_view) {};
        return o;
    }
    cache_t::factory_type factory() {
        return [this](const std::string& key) {
            return std::make_unique<agent_t>(writer, agent_t::parts{.client = model}, key);
        };
    }
    std::unique_ptr<cache_t> make(ania::session_limits limits = {}) {
        return std::make_unique<cache_t>(factory(), options(limits), clock);
    }
};

} // namespace

TEST_CASE("idle eviction at exactly max_idle, not a nanosecond before; the history comes back", "[session][eviction]") {
    rig r;
    auto cache = r.make();
    REQUIRE(cache->respond("g:1", "hello").status == ania::respond_status::replied);
    r.clock.advance(120min - 1ns);
    CHECK(cache->tick() == 0);
    CHECK(cache->contains("g:1"));
    r.clock.advance(1ns);
    CHECK(cache->tick() == 1);
    CHECK_FALSE(cache->contains("g:1"));
    REQUIRE(r.evicted->size() == 1);
    CHECK(r.evicted->front().second == ania::evict_reason::idle);
    CHECK(cache->counters().evicted_idle == 1);
    // Rebuilt from the store (through the writer): the next request carries the old turn.
    const auto again = cache->respond("g:1", "again");
    REQUIRE(again.turns.size() == 1);
    REQUIRE(again.turns[0].ok());
    r.writer.flush();
    CHECK(r.store.load("g:1").size() == 4);
    CHECK(cache->counters().created == 2);
}

TEST_CASE("LRU: past max_sessions the least recently active go", "[session][eviction]") {
    rig r;
    auto cache = r.make({.max_idle = 0ns, .max_sessions = 3});
    for (int i = 1; i <= 5; ++i) {
        cache->respond("g:" + std::to_string(i), "hi");
        r.clock.advance(1s);
    }
    cache->respond("g:1", "back");  // g:1 is the newest now
    CHECK(cache->tick() == 2);
    CHECK(cache->resident() == 3);
    CHECK(cache->contains("g:1"));
    CHECK_FALSE(cache->contains("g:2"));
    CHECK_FALSE(cache->contains("g:3"));
    CHECK(cache->contains("g:4"));
    CHECK(cache->contains("g:5"));
    CHECK(cache->counters().evicted_lru == 2);
}

TEST_CASE("0 disables idle eviction and the LRU cap", "[session][eviction]") {
    rig r;
    auto cache = r.make({.max_idle = 0ns, .max_sessions = 0});
    for (int i = 0; i < 200; ++i) cache->respond("g:" + std::to_string(i), "hi");
    r.clock.advance(std::chrono::hours(24 * 365));
    CHECK(cache->tick() == 0);
    CHECK(cache->resident() == 200);
}

namespace {
/// An eviction policy that chooses every session, after running `between` (a touch between the scan and
/// the re-check).
struct evict_all {
    static inline std::function<void()> between;
    explicit evict_all(const ania::session_limits&) {}
    void select(std::span<const ania::resident_session> s, std::int64_t, std::vector<ania::eviction_choice>& out) const {
        for (std::size_t i = 0; i < s.size(); ++i) out.push_back({i, ania::evict_reason::idle});
        if (between) between();
    }
};
} // namespace

TEST_CASE("a session touched between the scan and the lock survives", "[session][eviction]") {
    rig r;
    ania::session_cache<agent_t, evict_all, ania::manual_clock> cache(r.factory(), r.options(), r.clock);
    cache.respond("g:1", "a");
    cache.respond("g:2", "b");
    evict_all::between = [&] {
        r.clock.advance(1s);
        cache.respond("g:1", "touched now");
    };
    CHECK(cache.tick() == 1);
    evict_all::between = nullptr;
    CHECK(cache.contains("g:1"));
    CHECK_FALSE(cache.contains("g:2"));
    CHECK(cache.counters().skipped_busy == 1);
}

TEST_CASE("a session evicted by hand between the scan and the lock stays alive for the pass (no use after free)", "[session][eviction]") {
    // The pass's snapshot points at g:2's entry; evict() takes it out of the table meanwhile. The pass must
    // keep it alive until it ends: under AddressSanitizer the freed entry is poisoned in the pool, and the
    // pass's try_lock on it was reported (seen in CI, racing the console's evict against the janitor).
    rig r;
    ania::session_cache<agent_t, evict_all, ania::manual_clock> cache(r.factory(), r.options(), r.clock);
    cache.respond("g:1", "a");
    cache.respond("g:2", "b");
    bool evicted_by_hand = false;
    evict_all::between = [&] { evicted_by_hand = cache.evict("g:2"); };
    CHECK(cache.tick() == 1);  // g:1; g:2 was gone already
    evict_all::between = nullptr;
    CHECK(evicted_by_hand);
    CHECK_FALSE(cache.contains("g:1"));
    CHECK_FALSE(cache.contains("g:2"));
    CHECK(cache.counters().evicted_manual == 1);
    CHECK(cache.counters().skipped_busy == 1);  // the pass saw g:2 evicted under its lock
    cache.respond("g:2", "back");  // rebuilt from the store, in a fresh entry
    CHECK(cache.contains("g:2"));
}

TEST_CASE("a responding session and one with queued messages survive the janitor; the queue is merged into the next turn", "[session][eviction][queue]") {
    rig r;
    auto cache = r.make();
    r.model.hold();
    ania::respond_result first;
    std::thread talker([&] { first = cache->respond("g:1", "first"); });
    r.model.wait_inside();
    const auto q1 = cache->respond("g:1", "second");
    const auto q2 = cache->respond("g:1", "third");
    CHECK(q1.status == ania::respond_status::queued);
    CHECK(q1.tell_queued);         // told once ...
    CHECK_FALSE(q2.tell_queued);   // ... not twice
    CHECK(cache->pending("g:1") == 2);
    r.clock.advance(10h);
    CHECK(cache->tick() == 0);  // responding (and queued): kept
    CHECK(cache->counters().skipped_busy == 1);
    r.model.release();
    talker.join();
    REQUIRE(first.turns.size() == 2);  // its own turn, then the two queued ones as one
    CHECK(first.turns[1].messages.front().content == "second\nthird");
    CHECK(cache->pending("g:1") == 0);
    r.clock.advance(10h);
    CHECK(cache->tick() == 1);
}

TEST_CASE("the queue holds 20: the oldest is dropped past it", "[session][queue]") {
    rig r;
    auto cache = r.make();
    r.model.hold();
    ania::respond_result first;
    std::thread talker([&] { first = cache->respond("g:1", "first"); });
    r.model.wait_inside();
    std::size_t dropped = 0;
    for (int i = 0; i < 25; ++i) dropped += cache->respond("g:1", "m" + std::to_string(i)).dropped;
    CHECK(dropped == 5);
    CHECK(cache->pending("g:1") == 20);
    CHECK(cache->counters().dropped_pending == 5);
    r.model.release();
    talker.join();
    REQUIRE(first.turns.size() == 2);
    const std::string merged = first.turns[1].messages.front().content;
    CHECK(merged.rfind("m5\n", 0) == 0);  // m0..m4 were dropped
    CHECK(merged.find("m24") != std::string::npos);
}

TEST_CASE("/stop cancels the reply in progress and empties the queue", "[session][queue][cancel]") {
    rig r;
    auto cache = r.make();
    r.model.hold();
    ania::respond_result first;
    std::thread talker([&] { first = cache->respond("g:1", "long task"); });
    r.model.wait_inside();
    cache->respond("g:1", "queued one");
    CHECK(cache->stop("g:1"));
    CHECK(cache->pending("g:1") == 0);
    r.model.release();
    talker.join();
    REQUIRE(first.turns.size() == 1);  // the queued message was dropped by /stop
    // The model answered before it saw the stop: the turn ends as replied (the stop is checked at boundaries).
    CHECK(first.turns[0].end == ania::turn_end::replied);
    CHECK_FALSE(cache->stop("g:404"));
}

TEST_CASE("group messages that do not address the bot: no activity refresh, auto-clear after 30, reset by an addressed one", "[session][group]") {
    rig r;
    auto cache = r.make();
    cache->respond("g:7", "@bot 记住这个");
    r.writer.flush();
    REQUIRE(r.store.load("g:7").size() == 2);
    for (int i = 0; i < 29; ++i) CHECK(cache->respond("g:7", "chatter", false).status == ania::respond_status::ignored);
    cache->respond("g:7", "@bot still here");  // resets the count
    for (int i = 0; i < 29; ++i) CHECK(cache->respond("g:7", "chatter", false).status == ania::respond_status::ignored);
    r.writer.flush();
    CHECK(r.store.load("g:7").size() == 4);
    CHECK(cache->respond("g:7", "chatter", false).status == ania::respond_status::cleared);
    r.writer.flush();
    CHECK(r.store.load("g:7").empty());
    CHECK(cache->counters().cleared == 1);
    REQUIRE(r.evicted->size() == 1);
    CHECK(r.evicted->back().second == ania::evict_reason::cleared);
    // Non-addressed messages never refresh activity: the session is idle since its last addressed one.
    cache->respond("g:8", "@bot hi");
    r.clock.advance(100min);
    for (int i = 0; i < 5; ++i) cache->respond("g:8", "chatter", false);
    r.clock.advance(20min);
    cache->tick();
    CHECK_FALSE(cache->contains("g:8"));
}

TEST_CASE("a clear during a reply waits for the reply", "[session][group]") {
    rig r;
    auto cache = r.make();
    r.model.hold();
    std::thread talker([&] { cache->respond("g:1", "busy"); });
    r.model.wait_inside();
    std::atomic<bool> cleared{false};
    std::thread clearer([&] {
        cache->clear("g:1");
        cleared = true;
    });
    std::this_thread::sleep_for(50ms);
    CHECK_FALSE(cleared);  // waiting for the reply
    r.model.release();
    talker.join();
    clearer.join();
    CHECK(cleared);
    r.writer.flush();
    CHECK(r.store.load("g:1").empty());  // the reply was committed first, then cleared
}

TEST_CASE("the default eviction is idle then LRU; another one is the cache's (or the bot's) parameter", "[session][compile-time]") {
    STATIC_REQUIRE(std::is_same_v<ania::session_cache<agent_t>::eviction_type, ania::idle_then_lru>);
    STATIC_REQUIRE(std::is_same_v<ania::session_cache<agent_t, ania::lru_eviction>::eviction_type, ania::lru_eviction>);
    STATIC_REQUIRE(ania::eviction_policy<ania::idle_eviction>);
    struct no_select {
        explicit no_select(const ania::session_limits&) {}
    };
    STATIC_REQUIRE_FALSE(ania::eviction_policy<no_select>);
}

TEST_CASE("many threads in many sessions with the janitor ticking every millisecond: no message lost", "[session][threads]") {
    ania::ram_store store;
    ania::background_writer<ania::ram_store> writer(store);
    gated_client model;
    ania::session_options o;
    o.limits = {.max_idle = 0ns, .max_sessions = 4};  // constant LRU pressure: sessions come and go
    o.tick = 1ms;
    o.max_pending = 1000;  // nothing dropped: every line must arrive
    o.log = [](ania::log_level, std::string_view) {};
    std::atomic<int> replied_lines{0};
    {
        ania::session_cache<agent_t> cache(
            [&](const std::string& key) {
                return std::make_unique<agent_t>(writer, agent_t::parts{.client = model}, key);
            },
            o);
        constexpr int threads = 8, messages = 60, sessions = 6;
        // The console below starts first and the senders wait for its first pass.
        std::latch console_running{1};
        std::vector<std::thread> ts;
        for (int t = 0; t < threads; ++t)
            ts.emplace_back([&, t] {
                console_running.wait();
                for (int i = 0; i < messages; ++i) {
                    const std::string key = "g:" + std::to_string((t + i) % sessions);
                    if (i % 7 == 3) cache.respond(key, "noise", false);
                    if (i % 5 == 1) {  // the shared-lock paths, racing the janitor's scans, evictions and inserts
                        (void)cache.touch(key);
                        (void)cache.resident_bytes();
                        (void)cache.pending(key);
                    }
                    const auto r = cache.respond(key, "t" + std::to_string(t) + "m" + std::to_string(i));
                    for (const auto& c : r.turns) replied_lines += c.ok();
                }
            });
        // An operator's console meanwhile: snapshots and evictions of the same sessions.
        // Its own evictions and the LRU cap (4 of the 6 sessions) may leave a snapshot empty at any moment, so
        // what is checked is that every snapshot is well formed while the senders run (the latch makes sure
        // that it runs among them: before it, a loaded machine could finish every sender before its first pass).
        std::atomic<bool> done{false};
        std::size_t malformed = 0, evicted = 0;
        std::thread console([&] {
            for (int i = 0; i == 0 || !done.load(); ++i) {
                for (const ania::session_info& s : cache.snapshot()) malformed += !s.key.starts_with("g:");
                evicted += cache.evict("g:" + std::to_string(i % sessions));
                if (i == 0) console_running.count_down();
            }
        });
        for (auto& t : ts) t.join();
        done = true;
        console.join();
        CHECK(malformed == 0);
        CHECK(evicted == cache.counters().evicted_manual);
        for (int s = 0; s < sessions; ++s) CHECK(cache.pending("g:" + std::to_string(s)) == 0);
        CHECK(model.g->lines == threads * messages);  // every message reached the model, merged or alone
    }
    CHECK(replied_lines > 0);
}

TEST_CASE("handoff: a message arriving at any point of the end of a reply is never stranded", "[session][threads][queue]") {
    // Two threads race on one session 20,000 times (4,000 under a sanitizer): one replies, the other sends as
    // the reply ends. After each round nothing may be left in the queue with nobody to drain it.
    rig r;
    auto cache = r.make();
    constexpr int rounds = ania_test::stress_rounds(20000);
    for (int round = 0; round < rounds; ++round) {
        std::thread a([&] { cache->respond("g:1", "a"); });
        std::thread b([&] { cache->respond("g:1", "b"); });
        a.join();
        b.join();
        REQUIRE(cache->pending("g:1") == 0);
        if (round % 1000 == 999) {
            r.writer.flush();
            cache->with_agent("g:1", [](agent_t& ag) { ag.clear(); });
        }
    }
    CHECK(r.model.g->lines == 2 * rounds);
}

#if !defined(ANIA_TEST_ASAN) && !defined(ANIA_TEST_TSAN)  // their allocators do not report through mallinfo2
#include <malloc.h>

namespace {
struct instant_client {
    ania::completion complete(const ania::chat_request&) { return ania::completion::success(message::assistant("ok"), {10, 1, 11, {}}); }
};
struct churn_traits : ania::default_agent_traits {
    using client = instant_client;
    using store = ania::null_store;  // the history itself would grow: the cache's own memory is measured
    using log = quiet_log;
};
} // namespace

TEST_CASE("churn: 10,000 sessions created, evicted and recreated ten times return the heap to its baseline", "[session][memory]") {
    using churn_agent = ania::basic_agent<churn_traits>;
    ania::null_store store;
    ania::background_writer<ania::null_store> writer(store);
    ania::manual_clock clock;
    ania::session_options o;
    o.limits = {.max_idle = 1h, .max_sessions = 128};
    o.janitor = false;
    ania::session_cache<churn_agent, ania::idle_then_lru, ania::manual_clock> cache(
        [&](const std::string& key) {
            return std::make_unique<churn_agent>(writer, churn_agent::parts{.client = {}}, key);
        },
        o, clock);
    std::vector<std::string> keys;
    for (int i = 0; i < 10000; ++i) keys.push_back("g:" + std::to_string(1000000 + i));
    std::size_t baseline = 0;
    for (int round = 0; round < 10; ++round) {
        for (std::size_t i = 0; i < keys.size(); ++i) {
            clock.advance(1us);
            if (i % 10 == 0) cache.respond(keys[i], "hi");                    // a turn
            else if (i % 3 == 0) cache.respond(keys[i], "chatter", false);    // a counter only
            else cache.with_agent(keys[i], [](churn_agent&) {});              // an agent, no turn
        }
        cache.tick();
        REQUIRE(cache.resident() <= 128);
        clock.advance(2h);  // then every one goes idle: nothing of the round may stay behind
        cache.tick();
        REQUIRE(cache.resident() == 0);
        writer.flush();
        malloc_trim(0);
        const std::size_t in_use = mallinfo2().uordblks;
        if (round == 0) baseline = in_use;
        INFO("round " << round << ": " << in_use << " bytes in use, baseline " << baseline);
        CHECK(in_use <= baseline + baseline / 20);
    }
    CHECK(cache.counters().evicted_lru == 10 * (10000 - 128));
    CHECK(cache.counters().evicted_idle == 10 * 128);
}
#endif

TEST_CASE("capacity is not busy: with one reply at a time, a message for another session waits and is answered, never queued", "[session][queue][threads]") {
    rig r;
    auto o = r.options();
    o.max_concurrent_replies = 1;
    cache_t cache(r.factory(), o, r.clock);
    r.model.hold();
    ania::respond_result a, b;
    std::thread ta([&] { a = cache.respond("g:1", "one"); });
    r.model.wait_inside();
    std::thread tb([&] { b = cache.respond("g:2", "two"); });
    std::this_thread::sleep_for(50ms);
    CHECK(r.model.g->inside == 1);  // g:2 waits for a slot, outside the model
    const auto c = cache.respond("g:2", "three");  // g:2 owns itself while it waits: this queues behind it
    CHECK(c.status == ania::respond_status::queued);
    r.model.release();
    ta.join();
    tb.join();
    CHECK(a.status == ania::respond_status::replied);
    CHECK(b.status == ania::respond_status::replied);
    REQUIRE(b.turns.size() == 2);  // its own turn, then "three"
    CHECK(cache.pending("g:2") == 0);
}

TEST_CASE("max_concurrent_replies above what a semaphore counts is no limit, not a negative count", "[session][queue]") {
    // SIZE_MAX cast to the semaphore's ptrdiff_t was -1: a precondition violation (libstdc++ counts to INT_MAX).
    CHECK(ania::detail::concurrency_limit(std::numeric_limits<std::size_t>::max()).limit() == 0);
    CHECK(ania::detail::concurrency_limit(std::size_t(1) << 40).limit() == 0);
    CHECK(ania::detail::concurrency_limit(3).limit() == 3);
    rig r;
    auto o = r.options();
    o.max_concurrent_replies = std::numeric_limits<std::size_t>::max();
    cache_t cache(r.factory(), o, r.clock);
    CHECK(cache.respond("g:1", "one").status == ania::respond_status::replied);
    CHECK(cache.respond("g:2", "two").status == ania::respond_status::replied);
}

TEST_CASE("double texting: reject, latest only, one turn per message", "[session][queue]") {
    const auto run = [](ania::busy_policy p, std::vector<ania::respond_status>& statuses, std::size_t& dropped) {
        rig r;
        auto o = r.options();
        o.when_busy = p;
        cache_t cache(r.factory(), o, r.clock);
        r.model.hold();
        ania::respond_result first;
        std::thread talker([&] { first = cache.respond("g:1", "first"); });
        r.model.wait_inside();
        for (const char* m : {"a", "b", "c"}) {
            const auto q = cache.respond("g:1", m);
            statuses.push_back(q.status);
            dropped += q.dropped;
        }
        r.model.release();
        talker.join();
        std::vector<std::string> users;
        for (const auto& t : first.turns) users.push_back(t.messages.empty() ? "" : t.messages.front().content);
        return users;
    };
    std::vector<ania::respond_status> st;
    std::size_t dropped = 0;
    CHECK(run(ania::busy_policy::reject, st, dropped) == std::vector<std::string>{"first"});
    CHECK(st == std::vector<ania::respond_status>(3, ania::respond_status::rejected));
    st.clear();
    CHECK(run(ania::busy_policy::latest_only, st, dropped) == std::vector<std::string>{"first", "c"});
    CHECK(dropped == 2);
    st.clear();
    dropped = 0;
    CHECK(run(ania::busy_policy::one_per_message, st, dropped) == std::vector<std::string>{"first", "a", "b", "c"});
    CHECK(run(ania::busy_policy::queue, st, dropped) == std::vector<std::string>{"first", "a\nb\nc"});
}

TEST_CASE("a factory that throws fails the turn; the session stays usable", "[session][failure]") {
    rig r;
    int calls = 0;
    cache_t cache(
        [&](const std::string& key) -> std::unique_ptr<agent_t> {
            if (++calls == 1) throw std::runtime_error("database unreachable");
            return std::make_unique<agent_t>(r.writer, agent_t::parts{.client = r.model}, key);
        },
        r.options(), r.clock);
    const auto first = cache.respond("g:1", "hello");
    REQUIRE(first.turns.size() == 1);
    CHECK(first.turns[0].end == ania::turn_end::failed);
    CHECK(first.turns[0].error.find("database unreachable") != std::string::npos);
    const auto second = cache.respond("g:1", "again");
    REQUIRE(second.turns.size() == 1);
    CHECK(second.turns[0].ok());
}

namespace {
/// SCRIPTED: the first call waits for the gate and asks for a tool; every later call answers its last message.
struct steer_client {
    std::shared_ptr<gate_state> g = std::make_shared<gate_state>();
    ania::completion complete(const ania::chat_request& req) {
        if (g->calls++ == 0) {
            std::unique_lock l(g->m);
            ++g->inside;
            g->cv.notify_all();
            g->cv.wait(l, [&] { return !g->hold; });
            return ania::completion::success(message::assistant_calls({{"c1", "function", "noop", "{}", {}, {}}}));
        }
        return ania::completion::success(message::assistant("re: " + req.messages.back().text()));
    }
};
struct steer_traits : ania::default_agent_traits {
    using client = steer_client;
    using log = quiet_log;
};
} // namespace

TEST_CASE("busy_policy::steer: a message that arrives during a tool loop joins the running turn", "[session][queue][threads]") {
    using steer_agent = ania::basic_agent<steer_traits>;
    ania::ram_store store;
    ania::background_writer<ania::ram_store> writer(store);
    steer_client model;
    ania::session_options o;
    o.janitor = false;
    o.when_busy = ania::busy_policy::steer;
    o.log = [](ania::log_level, std::string_view) {};
    ania::session_cache<steer_agent> cache(
        [&](const std::string& key) {
            std::vector<ania::tool> tools{{"noop", "", ania::json::object(), [](std::string_view) { return std::string("ok"); }}};
            return std::make_unique<steer_agent>(writer, steer_agent::parts{.client = model, .tools = ania::tool_registry(tools)},
                                                 key);
        },
        o);
    {
        std::lock_guard l(model.g->m);
        model.g->hold = true;
    }
    ania::respond_result first;
    std::thread talker([&] { first = cache.respond("g:1", "start"); });
    {
        std::unique_lock l(model.g->m);
        model.g->cv.wait(l, [&] { return model.g->inside == 1; });
    }
    CHECK(cache.respond("g:1", "by the way").status == ania::respond_status::queued);
    {
        std::lock_guard l(model.g->m);
        model.g->hold = false;
    }
    model.g->cv.notify_all();
    talker.join();
    REQUIRE(first.turns.size() == 1);  // one turn: the queued message was steered into it
    CHECK(first.turns[0].reply == "re: by the way");
    CHECK(cache.pending("g:1") == 0);
}

namespace {
/// A SCRIPTED model that answers at once and calls `during` (if set) from inside the call: a message that
/// arrives while the session responds.
struct probe_client {
    std::shared_ptr<std::function<void()>> during = std::make_shared<std::function<void()>>();
    std::shared_ptr<std::int64_t> lines = std::make_shared<std::int64_t>(0);
    ania::completion complete(const ania::chat_request& req) {
        const std::string text = req.messages.back().text();
        *lines += 1 + static_cast<std::int64_t>(std::count(text.begin(), text.end(), '\n'));
        if (*during) (*during)();
        return ania::completion::success(message::assistant("ok"), {10, 1, 11, {}});
    }
};
struct probe_traits : ania::default_agent_traits {
    using client = probe_client;
    using store = ania::null_store;
    using log = quiet_log;
};
} // namespace

TEST_CASE("handoff, deterministic: a message delivered at every point of the end of a reply, 100,000 rounds", "[session][queue]") {
    // One thread. Round i delivers a second message at point i % 3: inside the model call (the session is
    // responding), after the turn returned but before the owner looked at the queue again, and after the
    // owner let go. Each point is reached on every round, so every ordering of "message arrives" and "reply
    // ends" happens 33,333 times; none may leave a message queued with nobody to drain it.
    using probe_agent = ania::basic_agent<probe_traits>;
    ania::null_store store;
    ania::background_writer<ania::null_store> writer(store);
    probe_client model;
    enum class at { during, turn_done, released };
    at point = at::during;
    bool delivered = false;
    ania::session_cache<probe_agent>* self = nullptr;
    std::array<std::int64_t, 3> queued_at{}, replied_at{};
    const auto deliver = [&](at where) {
        if (delivered || point != where) return;
        delivered = true;
        const auto r = self->respond("f:1", "second");
        (r.status == ania::respond_status::queued ? queued_at : replied_at)[static_cast<int>(where)]++;
    };
    *model.during = [&] { deliver(at::during); };
    ania::session_options o;
    o.janitor = false;
    o.log = [](ania::log_level, std::string_view) {};
    o.on_handoff = [&](std::string_view, ania::handoff_point p) {
        deliver(p == ania::handoff_point::turn_done ? at::turn_done : at::released);
    };
    ania::session_cache<probe_agent> cache(
        [&](const std::string& key) {
            return std::make_unique<probe_agent>(writer, probe_agent::parts{.client = model},
                                                 key, ania::agent_options{.window = {.max_context_tokens = 0}});
        },
        o);
    self = &cache;
    constexpr int rounds = ania_test::stress_rounds(100'000);
    for (int i = 0; i < rounds; ++i) {
        point = static_cast<at>(i % 3);
        delivered = false;
        cache.respond("f:1", "first");
        REQUIRE(delivered);
        REQUIRE(cache.pending("f:1") == 0);
        if (i % 1000 == 999) cache.with_agent("f:1", [](probe_agent& a) { a.clear(); });
    }
    CHECK(*model.lines == 2 * rounds);  // every message reached the model exactly once
    // Inside the call and before the owner looked again the session is busy: queued, drained by the owner.
    // After it let go the session is free: the message runs its own turn.
    const auto rounds_at = [&](int k) { return (rounds - k + 2) / 3; };  // rounds i < rounds with i % 3 == k
    CHECK(queued_at[0] == rounds_at(0));
    CHECK(queued_at[1] == rounds_at(1));
    CHECK(replied_at[2] == rounds_at(2));
}

namespace {
/// The docs' cost-aware policy (docs/architecture.md): past `keep` resident sessions, the ones holding the
/// most bytes go first.
struct most_bytes_first {
    std::size_t keep;
    explicit most_bytes_first(const ania::session_limits& l) : keep(l.max_sessions) {}
    void select(std::span<const ania::resident_session> s, std::int64_t, std::vector<ania::eviction_choice>& out) const {
        if (keep == 0 || s.size() <= keep) return;
        std::vector<std::size_t> order(s.size());
        for (std::size_t i = 0; i < order.size(); ++i) order[i] = i;
        std::nth_element(order.begin(), order.begin() + static_cast<std::ptrdiff_t>(s.size() - keep), order.end(),
                         [&](std::size_t a, std::size_t b) { return s[a].bytes > s[b].bytes; });
        for (std::size_t k = 0; k < s.size() - keep; ++k) out.push_back({order[k], ania::evict_reason::lru});
    }
};
static_assert(ania::eviction_policy<most_bytes_first>);
} // namespace

// The shipped policies, the docs' cost-aware one, and a sequence in the other order, through the kit.
using kit_policies = std::tuple<ania::idle_eviction, ania::lru_eviction, ania::idle_then_lru,
                                ania::eviction_sequence<ania::lru_eviction, ania::idle_eviction>, most_bytes_first>;
ANIA_TEST_EVICTION_POLICIES(kit_policies)

TEST_CASE("resident bytes: counted per session, seen by a cost-aware policy, zero after a clear", "[session][eviction]") {
    rig r;
    ania::session_cache<agent_t, most_bytes_first, ania::manual_clock> cache(r.factory(), r.options({.max_idle = 0ns, .max_sessions = 2}), r.clock);
    cache.respond("g:1", "short");
    const std::size_t one = cache.resident_bytes();
    CHECK(one > 0);
    cache.respond("g:2", std::string(5000, 'x'));  // the big one
    cache.respond("g:3", "small");
    CHECK(cache.resident_bytes() > one + 2 * 5000);  // the text is in the user message and in the "re: ..." reply
    r.clock.advance(1s);
    CHECK(cache.tick() == 1);
    CHECK_FALSE(cache.contains("g:2"));  // not the least recent: the largest
    CHECK(cache.contains("g:1"));
    CHECK(cache.contains("g:3"));
    CHECK(cache.resident_bytes() < 5000);
    cache.clear("g:1");
    cache.clear("g:3");
    CHECK(cache.resident_bytes() == 0);
}

TEST_CASE("debounce: lines sent in quick succession get one answer", "[session][queue][threads]") {
    rig r;
    auto o = r.options();
    o.debounce = 300ms;
    cache_t cache(r.factory(), o, r.clock);
    ania::respond_result first;
    std::thread a([&] { first = cache.respond("f:1", "one"); });
    const auto waiting = [&] {  // "one" waits out the debounce, still queued
        for (int i = 0; i < 5000 && cache.pending("f:1") == 0; ++i) std::this_thread::sleep_for(1ms);
        return cache.pending("f:1") > 0;
    };
    REQUIRE(waiting());
    CHECK(cache.respond("f:1", "two").status == ania::respond_status::queued);
    CHECK(cache.respond("f:1", "three").status == ania::respond_status::queued);
    a.join();
    REQUIRE(first.turns.size() == 1);
    CHECK(first.turns[0].reply == "re: one\ntwo\nthree");
    CHECK(r.model.g->calls == 1);
    // A /stop during the wait empties the queue: nothing is answered.
    ania::respond_result second;
    std::thread b([&] { second = cache.respond("f:1", "four"); });
    REQUIRE(waiting());
    cache.stop("f:1");
    b.join();
    CHECK(second.turns.empty());
    CHECK(r.model.g->calls == 1);
}

TEST_CASE("hibernate: run-time tools come back after an eviction; a clear forgets them", "[session][eviction]") {
    rig r;
    auto o = r.options();
    o.hibernate = true;
    cache_t cache(r.factory(), o, r.clock);
    const auto tools_of = [&](std::string_view key) {
        return cache.with_agent(key, [](agent_t& a) { return a.tools().session_tools().size(); });
    };
    cache.respond("f:1", "hi");
    cache.with_agent("f:1", [](agent_t& a) {
        a.add_tool({"dice", "rolls a die", ania::json{{"type", "object"}}, [](std::string_view) { return std::string("4"); }});
    });
    r.clock.advance(121min);
    REQUIRE(cache.tick() == 1);
    CHECK(cache.hibernated() == 1);
    CHECK(tools_of("f:1") == 1);  // rebuilt with its tool
    CHECK(cache.hibernated() == 0);
    cache.clear("f:1");
    CHECK(tools_of("f:1") == 0);

    // Without hibernate the eviction is the restart the spec accepts.
    rig r2;
    cache_t plain(r2.factory(), r2.options(), r2.clock);
    plain.with_agent("f:1", [](agent_t& a) {
        a.add_tool({"dice", "", ania::json{{"type", "object"}}, [](std::string_view) { return std::string("4"); }});
    });
    r2.clock.advance(121min);
    REQUIRE(plain.tick() == 1);
    CHECK(plain.hibernated() == 0);
    CHECK(plain.with_agent("f:1", [](agent_t& a) { return a.tools().session_tools().size(); }) == 0);

    // At most max_hibernated sessions are kept: the oldest is forgotten.
    rig r3;
    auto o3 = r3.options();
    o3.hibernate = true;
    o3.max_hibernated = 2;
    cache_t capped(r3.factory(), o3, r3.clock);
    for (const char* k : {"f:1", "f:2", "f:3"}) {  // created 1 s apart: evicted one per tick, oldest first
        capped.with_agent(k, [](agent_t& a) {
            a.add_tool({"dice", "", ania::json{{"type", "object"}}, [](std::string_view) { return std::string("4"); }});
        });
        r3.clock.advance(1s);
    }
    r3.clock.advance(120min - 3s);
    REQUIRE(capped.tick() == 1);
    r3.clock.advance(1s);
    REQUIRE(capped.tick() == 1);
    r3.clock.advance(1s);
    REQUIRE(capped.tick() == 1);
    CHECK(capped.hibernated() == 2);
    CHECK(capped.with_agent("f:1", [](agent_t& a) { return a.tools().session_tools().size(); }) == 0);
    CHECK(capped.with_agent("f:3", [](agent_t& a) { return a.tools().session_tools().size(); }) == 1);
}

namespace {
/// The default policy, counting the scans it is asked for (select) apart from the prescreen (may_select).
struct counting_eviction {
    static inline std::atomic<int> scans{0};
    ania::idle_then_lru inner;
    explicit counting_eviction(const ania::session_limits& l) : inner(l) {}
    void select(std::span<const ania::resident_session> s, std::int64_t now, std::vector<ania::eviction_choice>& out) const {
        ++scans;
        inner.select(s, now, out);
    }
    bool may_select(std::size_t resident, std::int64_t oldest, std::int64_t now) const { return inner.may_select(resident, oldest, now); }
};
static_assert(ania::prescreening_eviction_policy<counting_eviction>);
} // namespace

TEST_CASE("a tick that cannot evict skips the scan; the bound it keeps follows activity and insertions", "[session][eviction]") {
    using counted_cache = ania::session_cache<agent_t, counting_eviction, ania::manual_clock>;
    rig r;
    counting_eviction::scans = 0;
    counted_cache cache(r.factory(), r.options({.max_idle = 10min, .max_sessions = 3}), r.clock);
    for (const char* k : {"g:1", "g:2", "g:3"}) cache.with_agent(k, [](agent_t&) {});
    r.clock.advance(5min);
    CHECK(cache.tick() == 0);
    CHECK(counting_eviction::scans == 0);  // 3 resident (not over the cap), none can be idle: no scan
    r.clock.advance(3min);
    CHECK(cache.touch("g:1"));  // g:1 active at 8 min
    r.clock.advance(2min);      // 10 min: g:2 and g:3 are idle exactly max_idle
    CHECK(cache.tick() == 2);
    CHECK(counting_eviction::scans == 1);
    CHECK(cache.contains("g:1"));
    r.clock.advance(8min - 1ns);  // the bound is now g:1's 8 min: one nanosecond short of idle, no scan
    CHECK(cache.tick() == 0);
    CHECK(counting_eviction::scans == 1);
    r.clock.advance(1ns);
    CHECK(cache.tick() == 1);
    CHECK(counting_eviction::scans == 2);
    CHECK(cache.resident() == 0);
    // The LRU cap: at the cap no scan; one more session is a scan that evicts the least recent.
    for (const char* k : {"g:4", "g:5", "g:6"}) {
        r.clock.advance(1s);
        cache.with_agent(k, [](agent_t&) {});
    }
    CHECK(cache.tick() == 0);
    CHECK(counting_eviction::scans == 2);
    r.clock.advance(1s);
    cache.with_agent("g:7", [](agent_t&) {});
    CHECK(cache.tick() == 1);
    CHECK(counting_eviction::scans == 3);
    CHECK_FALSE(cache.contains("g:4"));
    // A clock set back voids the bounds: that pass scans whatever the prescreen would say.
    r.clock.set(r.clock.now().time_since_epoch() - 1h);
    CHECK(cache.tick() == 0);
    CHECK(counting_eviction::scans == 4);
}

namespace {
struct table_entry {
    std::string key;
};
} // namespace

TEST_CASE("radix_sort_by: the order std::stable_sort gives, for narrow, wide and few keys", "[session][sort]") {
    std::mt19937_64 rng(7);
    struct item {
        std::uint64_t key;
        std::size_t seq;  // to see stability
        bool operator==(const item&) const = default;
    };
    for (const std::uint64_t range : {std::uint64_t{1}, std::uint64_t{1} << 11, std::uint64_t{1} << 23, std::uint64_t{1} << 40, ~std::uint64_t{0}}) {
        for (const std::size_t n : {std::size_t{0}, std::size_t{1}, std::size_t{5}, std::size_t{63}, std::size_t{64}, std::size_t{10000}}) {
            std::vector<item> v(n);
            const std::uint64_t base = rng() / 2;  // keys away from 0: the sort is by key - min
            for (std::size_t i = 0; i < n; ++i)
                v[i] = {range == ~std::uint64_t{0} ? rng() : base + rng() % range, i};
            std::vector<item> want = v;
            std::stable_sort(want.begin(), want.end(), [](const item& a, const item& b) { return a.key < b.key; });
            std::vector<item> scratch;
            ania::detail::radix_sort_by(v, scratch, [](const item& x) { return x.key; });
            INFO("range " << range << " n " << n);
            CHECK(v == want);
            CHECK(scratch.empty());
        }
    }
    // What the janitor sorts: owning pointers, by address; none lost, none doubled.
    std::vector<std::unique_ptr<int>> ptrs, scratch;
    for (int i = 0; i < 3000; ++i) ptrs.push_back(std::make_unique<int>(i));
    std::shuffle(ptrs.begin(), ptrs.end(), rng);
    ania::detail::radix_sort_by(ptrs, scratch, [](const std::unique_ptr<int>& p) { return reinterpret_cast<std::uintptr_t>(p.get()); });
    CHECK(std::is_sorted(ptrs.begin(), ptrs.end(), [](const auto& a, const auto& b) { return std::less<>{}(a.get(), b.get()); }));
    std::vector<int> seen;
    for (const auto& p : ptrs) seen.push_back(*p);
    std::sort(seen.begin(), seen.end());
    std::vector<int> all(3000);
    std::iota(all.begin(), all.end(), 0);
    CHECK(seen == all);
}

TEST_CASE("entry_table: a shard's sessions against std::unordered_map, colliding hashes and wrap-around included", "[session][table]") {
    // Hashes drawn from a small range collide and make long runs that wrap past the array's end: what the
    // backward shift of take() and the rehash of compact() must keep findable.
    for (const std::uint32_t hash_range : {7u, 64u, 1u << 30}) {
        ania::detail::entry_table<table_entry> table;
        std::unordered_map<std::string, std::pair<std::size_t, std::shared_ptr<table_entry>>> ref;
        std::uint64_t state = 42 + hash_range;
        const auto next = [&] { return state = state * 6364136223846793005ULL + 1442695040888963407ULL, state >> 33; };
        std::size_t peak = 0;
        for (int step = 0; step < 20000; ++step) {
            const std::string key = "g:" + std::to_string(next() % 600);
            const std::size_t hash = (next() % hash_range) | (step % 3 == 0 ? std::size_t{1} << 40 : 0);
            const auto it = ref.find(key);
            const auto op = next() % 10;
            if (it == ref.end() && op < 6) {
                auto e = std::make_shared<table_entry>(table_entry{key});
                table.insert(hash, e);
                ref.emplace(key, std::pair{hash, e});
            } else if (it != ref.end() && op < 5) {
                const std::shared_ptr<table_entry> out = table.take(it->second.second.get(), it->second.first);
                REQUIRE(out == it->second.second);
                REQUIRE(table.take(out.get(), it->second.first) == nullptr);  // gone: compare-and-delete fails
                ref.erase(it);
            } else if (op == 9) {
                table.compact();
            }
            peak = std::max(peak, ref.size());
            REQUIRE(table.size() == ref.size());
            if (step % 97 == 0 || ref.size() < 4) {  // every stored key is found, with its own entry
                for (const auto& [k, v] : ref) {
                    const auto* found = table.find(k, v.first);
                    REQUIRE(found);
                    REQUIRE(*found == v.second);
                }
                std::size_t seen = 0;
                table.for_each([&](const table_entry& e) {
                    ++seen;
                    REQUIRE(ref.count(e.key) == 1);
                });
                REQUIRE(seen == ref.size());
            }
            if (ref.count(key) == 0) REQUIRE(table.find(key, hash) == nullptr);
        }
        // Emptied and compacted, the array is given back (memory follows the resident count).
        for (const auto& [k, v] : ref) REQUIRE(table.take(v.second.get(), v.first) == v.second);
        table.compact();
        CHECK(table.size() == 0);
        CHECK(table.slots().empty());
        CHECK(peak > 100);
    }
}

TEST_CASE("block_pool: a freed block is reused; one not reused for a whole tick goes back to the heap", "[session][table]") {
    ania::detail::block_pool pool;
    constexpr std::size_t size = 200, align = alignof(std::max_align_t);
    std::vector<void*> blocks;
    for (int i = 0; i < 100; ++i) blocks.push_back(pool.allocate(size, align));
    for (void* p : blocks) pool.deallocate(p, size, align);
    CHECK(pool.idle_blocks() == 100);
    pool.settle();
    // The next blocks made are the freed ones, the most recently freed first.
    std::vector<void*> again;
    for (int i = 0; i < 10; ++i) again.push_back(pool.allocate(size, align));
    for (int i = 0; i < 10; ++i) CHECK(again[static_cast<std::size_t>(i)] == blocks[blocks.size() - 1 - static_cast<std::size_t>(i)]);
    // The 90 nobody took since settle() go back; a block freed after it stays until the next tick.
    pool.trim();
    CHECK(pool.idle_blocks() == 0);
    for (void* p : again) pool.deallocate(p, size, align);
    pool.trim();
    CHECK(pool.idle_blocks() == 10);
    pool.settle();
    pool.trim();
    CHECK(pool.idle_blocks() == 0);
#ifdef ANIA_TEST_ASAN
    // Under ASan a pooled block is poisoned (a use of a freed entry is still caught), and usable again once reused.
    void* p = pool.allocate(size, align);
    pool.deallocate(p, size, align);
    CHECK(__asan_address_is_poisoned(p));
    CHECK(pool.allocate(size, align) == p);
    CHECK_FALSE(__asan_address_is_poisoned(static_cast<char*>(p) + size - 1));
    pool.deallocate(p, size, align);
#endif
    // Another size is not pooled.
    const std::size_t idle = pool.idle_blocks();
    void* odd = pool.allocate(size * 2, align);
    pool.deallocate(odd, size * 2, align);
    CHECK(pool.idle_blocks() == idle);
}

TEST_CASE("block_pool: threads making and freeing entries at once", "[session][table][threads]") {
    ania::detail::block_pool pool;
    std::atomic<int> shared_blocks{0};  // a block seen overwritten by another thread while held (Catch2 asserts on one thread only)
    std::vector<std::thread> threads;
    for (int t = 0; t < 4; ++t)
        threads.emplace_back([&pool, &shared_blocks, t] {
            std::vector<void*> mine;
            for (int i = 0; i < 20000; ++i) {
                if (mine.size() < 64 && (i + t) % 3 != 0) {
                    mine.push_back(pool.allocate(64, 16));
                    std::memset(mine.back(), t, 64);  // a block is nobody else's while held
                } else if (!mine.empty()) {
                    if (static_cast<unsigned char*>(mine.back())[63] != static_cast<unsigned char>(t)) ++shared_blocks;
                    pool.deallocate(mine.back(), 64, 16);
                    mine.pop_back();
                }
                if (i % 5000 == 0) {
                    pool.trim();
                    pool.settle();
                }
            }
            for (void* p : mine) pool.deallocate(p, 64, 16);
        });
    for (auto& th : threads) th.join();
    CHECK(shared_blocks == 0);
    pool.settle();
    pool.trim();
    CHECK(pool.idle_blocks() == 0);
}

TEST_CASE("striped_mutex: readers exclude writers but not each other, writers exclude all", "[session][thread]") {
    using striped = ania::detail::striped_mutex<8>;
    striped m;
    SECTION("4 readers and 2 writers at once: a writer is alone inside, readers never see half a write") {
        long a = 0, b = 0;  // not atomic: a writer sets both, a reader must always see them equal (TSan checks it too)
        std::atomic<int> readers_inside{0}, writers_inside{0}, bad{0}, started{0};
        std::atomic<long> reads{0};
        std::vector<std::thread> ts;
        for (int t = 0; t < 6; ++t)
            ts.emplace_back([&, writer = t < 2] {
                started.fetch_add(1);
                while (started.load() < 6) std::this_thread::yield();
                for (int i = 0; i < 5000; ++i) {
                    if (writer) {
                        std::lock_guard l(m);
                        if (writers_inside.fetch_add(1) != 0 || readers_inside.load() != 0) bad.fetch_add(1);
                        const long seen = a;
                        for (int spin = 0; spin < 8; ++spin) std::atomic_signal_fence(std::memory_order_seq_cst);
                        a = seen + 1;
                        b = seen + 1;
                        writers_inside.fetch_sub(1);
                    } else {
                        const striped::reader l(m);
                        readers_inside.fetch_add(1);
                        if (writers_inside.load() != 0 || a != b) bad.fetch_add(1);
                        reads.fetch_add(1);
                        readers_inside.fetch_sub(1);
                    }
                }
            });
        for (auto& t : ts) t.join();
        CHECK(bad.load() == 0);
        CHECK(a == 10000);
        CHECK(reads.load() == 20000);
    }
    SECTION("two readers are inside at the same time") {
        std::atomic<int> inside{0};
        std::atomic<bool> met[2] = {false, false};
        std::size_t stripe[2] = {0, 0};
        std::vector<std::thread> ts;
        for (int t = 0; t < 2; ++t)
            ts.emplace_back([&, t] {
                stripe[t] = striped::own_stripe();
                const striped::reader l(m);
                inside.fetch_add(1);
                const auto deadline = std::chrono::steady_clock::now() + 5s;
                while (inside.load() < 2 && std::chrono::steady_clock::now() < deadline) std::this_thread::yield();
                met[t] = inside.load() == 2;
            });
        for (auto& t : ts) t.join();
        REQUIRE(stripe[0] != stripe[1]);  // consecutive threads read through stripes of their own
        CHECK(met[0].load());
        CHECK(met[1].load());
    }
    SECTION("try_lock fails while a reader is inside and holds nothing after") {
        std::atomic<bool> in{false}, leave{false};
        std::thread reader([&] {
            const striped::reader l(m);
            in = true;
            while (!leave.load()) std::this_thread::yield();
        });
        while (!in.load()) std::this_thread::yield();
        CHECK_FALSE(m.try_lock());
        std::atomic<bool> other_in{false};
        std::thread other([&] {  // no stripe was left held by the failed try: another reader gets in at once
            const striped::reader l(m);
            other_in = true;
        });
        const auto deadline = std::chrono::steady_clock::now() + 5s;
        while (!other_in.load() && std::chrono::steady_clock::now() < deadline) std::this_thread::yield();
        CHECK(other_in.load());  // while the first reader is still inside
        leave = true;
        other.join();
        reader.join();
        REQUIRE(m.try_lock());
        m.unlock();
    }
}

TEST_CASE("small_mutex: exclusive under contention, sleepers woken, try_lock, condition_variable_any", "[session][thread]") {
    ania::detail::small_mutex m;
    SECTION("4 threads x 20,000 increments of a plain counter, never two inside") {
        long counter = 0;  // not atomic: the lock is all that orders the increments (TSan checks it too)
        std::atomic<int> inside{0}, overlaps{0}, started{0};
        std::vector<std::thread> ts;
        for (int t = 0; t < 4; ++t)
            ts.emplace_back([&] {
                started.fetch_add(1);
                while (started.load() < 4) std::this_thread::yield();  // all at once, not one after another
                for (int i = 0; i < 20000; ++i) {
                    std::lock_guard l(m);
                    if (inside.fetch_add(1) != 0) overlaps.fetch_add(1);
                    const long seen = counter;
                    for (int spin = 0; spin < 8; ++spin) std::atomic_signal_fence(std::memory_order_seq_cst);
                    counter = seen + 1;
                    inside.fetch_sub(1);
                }
            });
        for (auto& t : ts) t.join();
        CHECK(overlaps.load() == 0);
        CHECK(counter == 80000);
    }
    SECTION("threads blocked behind a long hold sleep, then all get in") {
        std::atomic<int> entered{0};
        m.lock();
        CHECK_FALSE(m.try_lock());
        std::vector<std::thread> ts;
        for (int t = 0; t < 3; ++t)
            ts.emplace_back([&] {
                std::lock_guard l(m);
                entered.fetch_add(1);
                std::this_thread::sleep_for(2ms);  // the others wait again: a wake-up per unlock
            });
        std::this_thread::sleep_for(50ms);  // well past the spin: the three are asleep in the futex
        CHECK(entered.load() == 0);
        m.unlock();
        for (auto& t : ts) t.join();
        CHECK(entered.load() == 3);
        CHECK(m.try_lock());
        m.unlock();
    }
    SECTION("a condition_variable_any over it") {
        std::condition_variable_any cv;
        bool ready = false;
        std::thread t([&] {
            std::this_thread::sleep_for(10ms);
            {
                std::lock_guard l(m);
                ready = true;
            }
            cv.notify_all();
        });
        {
            std::unique_lock l(m);
            cv.wait(l, [&] { return ready; });
            CHECK(ready);
        }
        t.join();
    }
}

TEST_CASE("snapshot and evict: what an operator sees of each session; a responding or queued session is not evicted", "[session][eviction][threads]") {
    rig r;
    auto cache = r.make();
    REQUIRE(cache->respond("g:1", "hello").status == ania::respond_status::replied);
    r.clock.advance(5s);
    r.model.hold();
    std::thread answering([&] { (void)cache->respond("g:2", "a long answer"); });
    r.model.wait_inside();
    CHECK(cache->respond("g:2", "and another thing").status == ania::respond_status::queued);
    std::vector<ania::session_info> snap = cache->snapshot();
    std::sort(snap.begin(), snap.end(), [](const auto& a, const auto& b) { return a.key < b.key; });
    REQUIRE(snap.size() == 2);
    CHECK(snap[0].key == "g:1");
    CHECK(snap[0].idle == 5s);
    CHECK(snap[0].messages == 2);
    CHECK(snap[0].tokens > 0);
    CHECK(snap[0].bytes > 0);
    CHECK_FALSE(snap[0].responding);
    CHECK(snap[0].pending == 0);
    CHECK_FALSE(snap[0].since_compression);
    CHECK(snap[1].key == "g:2");
    CHECK(snap[1].responding);
    CHECK(snap[1].pending == 1);
    CHECK_FALSE(cache->evict("g:2"));  // responding, with a message queued: kept
    CHECK_FALSE(cache->evict("g:9"));  // not resident
    r.model.release();
    answering.join();
    CHECK(cache->evict("g:1"));
    CHECK_FALSE(cache->contains("g:1"));
    CHECK(cache->counters().evicted_manual == 1);
    REQUIRE_FALSE(r.evicted->empty());
    CHECK(r.evicted->back() == std::pair<std::string, ania::evict_reason>{"g:1", ania::evict_reason::manual});
    // Its history is in the store: it comes back on its next message.
    REQUIRE(cache->respond("g:1", "again").turns.at(0).ok());
    r.writer.flush();
    CHECK(r.store.load("g:1").size() == 4);
    // A clear zeroes what the snapshot shows.
    cache->clear("g:2");
    for (const auto& s : cache->snapshot())
        if (s.key == "g:2") CHECK(s.messages == 0);
}
