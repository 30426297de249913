// tests/unit/memory_threads.cpp -- long-term memory where threads meet: one manager from several threads, a
// slow search that holds one scope only, the background backfill. Apart from memory.cpp so that the
// ThreadSanitizer build compiles only these.
#include <catch2/catch.hpp>

#include <atomic>
#include <chrono>
#include <memory>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include <ania/memory/backfill.hpp>
#include <ania/memory/manager.hpp>
#include <ania/memory/manager-inl.hpp>  // managers over the test traits (compiled mode: the library has the shipped ones)
#include <ania/memory/ram_backend.hpp>

#include "memory_fixtures.hpp"

using namespace ania::memory;
using namespace ania_test;

namespace {
using plain_manager = test_manager<>;
using scripted_traits = test_memory_traits<ram_backend, scripted_embedder>;
template <class Tokenizer>
struct tokenizer_traits : default_memory_traits {
    using tokenizer = Tokenizer;
};
} // namespace

TEST_CASE("the background backfill embeds a backlog a few entries per round", "[memory][embed]") {
    ram_backend b;
    scripted_embedder emb;
    basic_manager<scripted_traits> m(b, quiet_options(), {.embedder = emb});
    *emb.available = false;
    for (int i = 0; i < 7; ++i) m.save(g1, "entry without vector " + std::to_string(i * 1009));
    *emb.available = true;
    {
        embedding_backfill<decltype(m)> worker(m, std::chrono::milliseconds(5), 2);
        for (int wait = 0; wait < 2000 && worker.embedded() < 7; ++wait) std::this_thread::sleep_for(std::chrono::milliseconds(1));
        CHECK(worker.embedded() == 7);
        CHECK(worker.rounds() >= 4);  // 2 per round: rate-limited
    }
    for (const auto& e : m.list(g1)) CHECK(e.embedding.size() == 16);
}


TEST_CASE("the manager is safe to use from several threads", "[memory][threads]") {
    ram_backend b;
    auto opt = quiet_options();
    opt.max_entries = 1000;
    plain_manager m(b, opt);
    std::vector<std::thread> threads;
    for (int t = 0; t < 4; ++t)
        threads.emplace_back([&, t] {
            const scope own = scope::from("g:" + std::to_string(1000 + t));
            for (int i = 0; i < 100; ++i) {
                m.save(own, "thread " + std::to_string(t) + " fact " + std::to_string(i * 7919));
                m.save(g1, "shared " + std::to_string(t) + " item " + std::to_string(i * 104729));
                (void)m.search(g1, "shared item");
                (void)m.search(own, "fact");
            }
        });
    for (auto& th : threads) th.join();
    for (int t = 0; t < 4; ++t) CHECK(m.list(scope::from("g:" + std::to_string(1000 + t))).size() == 100);
    const auto shared = m.list(g1);
    CHECK(shared.size() == 400);
    std::set<std::string> ids;
    for (const auto& e : shared) ids.insert(e.id);
    CHECK(ids.size() == 400);
    CHECK(b.load(g1).size() == 400);
}


namespace {
/// The reference tokenizer, except that a query holding "blockhere" waits inside the scope's lock until the
/// test opens the gate: it stands for a scoring that takes long (a huge query).
struct gated_tokenizer {
    std::shared_ptr<std::atomic<bool>> inside = std::make_shared<std::atomic<bool>>(false);
    std::shared_ptr<std::atomic<bool>> open = std::make_shared<std::atomic<bool>>(false);
    template <class Emit>
    void operator()(std::string_view lowered, Emit&& emit) const {
        if (lowered.find("blockhere") != std::string_view::npos) {
            *inside = true;
            for (int waited = 0; !*open && waited < 10000; ++waited) std::this_thread::sleep_for(std::chrono::milliseconds(1));
        }
        for_each_token_lowered(lowered, emit);
    }
};
} // namespace

TEST_CASE("a slow search in one scope does not block the other scopes", "[memory][threads]") {
    ram_backend b;
    gated_tokenizer tok;
    basic_manager<tokenizer_traits<gated_tokenizer>> m(b, quiet_options(), {.tokenizer = tok});
    REQUIRE(m.save(g1, "one fact").status == save_status::saved);
    std::thread slow([&] { (void)m.search(g1, "blockhere"); });
    while (!*tok.inside) std::this_thread::sleep_for(std::chrono::milliseconds(1));
    // g1 is busy scoring; g2 is not: its operations complete while g1's lock is held.
    std::atomic<bool> done{false};
    std::thread other([&] {
        (void)m.save(g2, "another fact");
        (void)m.search(g2, "fact");
        done = true;
    });
    for (int waited = 0; !done && waited < 5000; ++waited) std::this_thread::sleep_for(std::chrono::milliseconds(1));
    CHECK(done.load());  // with one manager-wide lock this waits for the gate (10 s) and fails
    *tok.open = true;
    slow.join();
    other.join();
    CHECK(m.size(g2) == 1);
}

TEST_CASE("readers of one scope run side by side: a listing does not wait for a slow search, a write does", "[memory][threads]") {
    ram_backend b;
    gated_tokenizer tok;
    basic_manager<tokenizer_traits<gated_tokenizer>> m(b, quiet_options(), {.tokenizer = tok});
    REQUIRE(m.save(g1, "one fact").status == save_status::saved);
    const std::string id = m.list(g1).at(0).id;
    REQUIRE(m.search(g1, "fact").size() == 1);  // loaded and its postings built: reads take the shared lock
    std::thread slow([&] { (void)m.search(g1, "blockhere"); });
    while (!*tok.inside) std::this_thread::sleep_for(std::chrono::milliseconds(1));
    // g1 is being read (a turn's search); the other reads of g1 go on meanwhile (an operator's listing).
    std::atomic<bool> done{false};
    std::size_t listed = 0, found = 0, hits = 0, size = 0;
    std::thread reader([&] {
        listed = m.list(g1).size();
        found = m.get(g1, id).has_value() ? 1 : 0;
        hits = m.search(g1, "fact").size();
        size = m.size(g1) + m.stats(g1).entries;
        done = true;
    });
    for (int waited = 0; !done && waited < 5000; ++waited) std::this_thread::sleep_for(std::chrono::milliseconds(1));
    CHECK(done.load());  // with one exclusive lock per scope this waits for the gate (10 s) and fails
    // A write needs the scope to itself: it waits for the slow search.
    std::atomic<bool> saved{false};
    std::thread writer([&] {
        (void)m.save(g1, "second fact");
        saved = true;
    });
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    CHECK_FALSE(saved.load());
    *tok.open = true;
    slow.join();
    reader.join();
    writer.join();
    CHECK(listed == 1);
    CHECK(found == 1);
    CHECK(hits == 1);
    CHECK(size == 2);
    CHECK(saved.load());
    CHECK(m.size(g1) == 2);
    CHECK(m.search(g1, "second").size() == 1);  // the write made the postings stale: the next search rebuilt them
}
