// ania/session/session_cache.hpp -- the resident sessions of a bot (SPEC §3): one agent per conversation,
// built on demand from its store, evicted by a janitor when idle or past the cap, cleared after a run of
// group messages that do not address the bot. This is the façade; its jobs are beside it: entry.hpp (one
// session), inbox.hpp (the queue and admission), janitor.hpp (eviction), hibernation.hpp, lease.hpp,
// options.hpp and results.hpp.
// SPDX-License-Identifier: MIT
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <exception>
#include <functional>
#include <list>
#include <memory>
#include <mutex>
#include <stop_token>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <ania/agent/chat.hpp>
#include <ania/agent/concepts.hpp>
#include <ania/concepts.hpp>
#include <ania/detail/concurrency_limit.hpp>
#include <ania/detail/worker.hpp>
#include <ania/error.hpp>
#include <ania/log.hpp>
#include <ania/session/block_pool.hpp>
#include <ania/session/entry.hpp>
#include <ania/session/eviction.hpp>
#include <ania/session/hibernation.hpp>
#include <ania/session/inbox.hpp>
#include <ania/session/janitor.hpp>
#include <ania/session/lease.hpp>
#include <ania/session/options.hpp>
#include <ania/session/results.hpp>

namespace ania {

/// The cache of agents, keyed by conversation (`g:<id>` / `f:<id>`). `respond` builds a session's agent on
/// demand (the factory's agent loads its history through the writer, so queued appends are seen), runs the
/// turn while it owns the session, and queues messages that arrive meanwhile; the owner drains the queue
/// before it lets go, and lets go only with the queue empty, atomically (no message is stranded). Only
/// addressed messages refresh a session's activity. The janitor (one thread, `options.tick`) asks the
/// eviction policy which sessions to drop, then evicts each only if, under its lock, it is not responding,
/// has nothing queued and was not touched since the scan, and the map still holds that same entry
/// (compare-and-delete). Eviction drops the in-memory agent only; the store keeps the history. One entry
/// owns all per-session state (agent, queue, counter, stop handle), so eviction or a clear frees all of it.
/// Every member is thread-safe. The destructor stops the janitor and flushes the agents' writers.
template <class Agent, eviction_policy Eviction = idle_then_lru, agent_clock Clock = steady_clock_policy>
class session_cache {
public:
    using agent_type = Agent;
    using eviction_type = Eviction;
    using factory_type = std::function<std::unique_ptr<Agent>(const std::string& key)>;

    explicit session_cache(factory_type make, session_options opt = {}, Clock clock = {})
        : make_(std::move(make)), opt_(std::move(opt)), clock_(std::move(clock)), pass_(opt_.limits),
          slots_(opt_.max_concurrent_replies), hibernated_(opt_.max_hibernated) {
        if (!make_) throw error(errc::invalid_argument, "session_cache: the agent factory is empty");
        if (opt_.janitor) janitor_.start(opt_.tick, [this] { janitor_tick(); });
    }
    session_cache(const session_cache&) = delete;
    session_cache& operator=(const session_cache&) = delete;

    ~session_cache() {
        janitor_.stop();
        for (shard& s : shards_) {  // pending persistence reaches the store before the agents go
            std::lock_guard l(s.m);
            s.map.for_each([](entry& e) {
                std::lock_guard el(e.m);
                if (e.agent) e.agent->writer().flush();
            });
        }
    }

    /// A message for session `key`. `addressed`: it is for the bot (a private message, an @-mention, a reply
    /// to the bot); only those run a turn and refresh activity. Blocks while this call runs turns.
    respond_result respond(std::string_view key, user_input input, bool addressed = true, const chat_options& copt = {}) {
        bool clearing = false;
        while (true) {
            std::shared_ptr<entry> e = get_or_create(key);
            entry_lock l(e->m);
            if (e->evicted) continue;  // evicted between the lookup and the lock: a new entry
            if (!addressed) {
                if (!clearing) {
                    if (opt_.group_auto_clear <= 0 || ++e->non_addressed < opt_.group_auto_clear) return {respond_status::ignored, {}, false, 0};
                    clearing = true;
                }
                wait_on_shard(*e, [&](auto& cv) { cv.wait(l, [&] { return !e->owned; }); });  // a clear waits for the reply
                if (e->evicted) continue;
                e->owned = true;
                e->non_addressed = 0;
                l.unlock();
                respond_result r{respond_status::cleared, {}, false, 0};
                clear_owned(*e, key);
                drain(*e, key, copt, r);
                return r;
            }
            e->non_addressed = 0;
            touch(*e);
            respond_result r{respond_status::queued, {}, false, 0};
            if (!detail::enqueue(*e, std::move(input), opt_, r, counters_)) return {respond_status::rejected, {}, false, 0};
            if (opt_.debounce.count() > 0) {
                e->last_arrival = std::chrono::steady_clock::now();
                if (e->waiters > 0) shard_of(*e).idle.notify_all();  // an owner waiting out the debounce starts waiting again
            }
            if (e->owned) {
                r.tell_queued = !e->told_queued;
                e->told_queued = true;
                return r;
            }
            e->owned = true;
            l.unlock();
            r.status = respond_status::replied;
            drain(*e, key, copt, r);
            return r;
        }
    }

    /// Refreshes the activity of a resident session (an interaction addressed to the AI that does not go
    /// through respond). Returns false when the session is not resident.
    bool touch(std::string_view key) {
        const std::size_t h = hash_of(key);
        const shard& s = shards_[h % shard_count];
        const shard_mutex::reader l(s.m);
        const auto* e = s.map.find(key, h);
        if (!e) return false;
        touch(**e);
        return true;
    }

    /// `/stop`: cancels the reply in progress (at its next boundary) and empties the queue. Returns whether
    /// the session was responding.
    bool stop(std::string_view key) {
        const std::shared_ptr<entry> e = find(key);
        if (!e) return false;
        std::lock_guard l(e->m);
        e->pending.clear();
        e->told_queued = false;
        if (e->stop.stop_possible()) e->stop.request_stop();
        return e->owned;
    }

    /// Clears a session now (window, store, run-time tools), after the reply in progress.
    void clear(std::string_view key) {
        const std::shared_ptr<entry> e = own(key);
        {
            std::lock_guard l(e->m);
            e->non_addressed = 0;
        }
        respond_result r;
        clear_owned(*e, key);
        drain(*e, key, {}, r);
    }

    /// One janitor pass (the janitor thread calls it every `options.tick`). Returns how many it evicted.
    /// Passes are serialised.
    std::size_t tick() {
        struct hooks {
            session_cache& c;
            void hibernate(const std::string& key, Agent& a) {
                if (c.opt_.hibernate) c.hibernated_.keep(key, a);
            }
            [[nodiscard]] bool tells_evictions() const noexcept { return static_cast<bool>(c.opt_.on_evicted); }
            void evicted(std::string_view key, evict_reason why) { c.notify_evicted(key, why); }
        } h{*this};
        return pass_.run(shards_, entry_pool_, now_ns(), counters_, h);
    }

    [[nodiscard]] std::size_t resident() const {
        std::size_t n = 0;
        for (const shard& s : shards_) {
            const shard_mutex::reader l(s.m);
            n += s.map.size();
        }
        return n;
    }
    /// About how many bytes the resident sessions' windows hold (each as of its last turn).
    [[nodiscard]] std::size_t resident_bytes() const {
        std::size_t n = 0;
        for (const shard& s : shards_) {
            const shard_mutex::reader l(s.m);
            s.map.for_each([&](const entry& e) { n += e.bytes.load(std::memory_order_relaxed); });
        }
        return n;
    }
    /// Sessions whose run-time tools are kept for their return (session_options::hibernate).
    [[nodiscard]] std::size_t hibernated() const {
        return hibernated_.size();
    }
    [[nodiscard]] bool contains(std::string_view key) const { return find(key) != nullptr; }
    [[nodiscard]] session_counters counters() const { return counters_.snapshot(); }
    /// Messages waiting in a session's queue (0 when it is not resident).
    [[nodiscard]] std::size_t pending(std::string_view key) const {
        const std::shared_ptr<entry> e = find(key);
        if (!e) return 0;
        std::lock_guard l(e->m);
        return e->pending.size();
    }
    /// Every resident session, in no particular order (an operator's view: the admin console). Each shard is
    /// read under its shared lock and each session's queue under its own, one at a time: a pass of the
    /// janitor or a reply waits at most for one shard's copy.
    [[nodiscard]] std::vector<session_info> snapshot() const {
        std::vector<session_info> out;
        const std::int64_t now = now_ns();
        for (const shard& s : shards_) {
            const shard_mutex::reader l(s.m);
            s.map.for_each([&](entry& e) {
                session_info i;
                i.key = e.key;
                i.idle = std::chrono::nanoseconds(std::max<std::int64_t>(0, now - e.last_active.load(std::memory_order_acquire)));
                i.messages = e.messages.load(std::memory_order_relaxed);
                i.bytes = e.bytes.load(std::memory_order_relaxed);
                i.tokens = e.tokens.load(std::memory_order_relaxed);
                if (const std::int64_t c = e.last_compression.load(std::memory_order_relaxed); c != detail::no_activity)
                    i.since_compression = std::chrono::nanoseconds(std::max<std::int64_t>(0, now - c));
                {
                    std::lock_guard el(e.m);
                    i.pending = e.pending.size();
                    i.responding = e.owned;
                }
                out.push_back(std::move(i));
            });
        }
        return out;
    }
    /// Evicts one session now, as the janitor would (the store keeps its history; it is rebuilt from it on its
    /// next message) — only if it is resident, not responding and has nothing queued. True when it was evicted.
    bool evict(std::string_view key) {
        const std::size_t h = hash_of(key);
        shard& s = shards_[h % shard_count];
        std::unique_ptr<Agent> gone;     // destroyed after the locks (its writer flush may take a while)
        // Made before the locks, for the janitor's retire(): a pass running meanwhile may hold the entry in its
        // snapshot, and then keeps it alive until it ends.
        std::list<std::shared_ptr<entry>> held(1);
        {
            std::lock_guard l(s.m);
            const auto* found = s.map.find(key, h);
            if (!found) return false;
            entry& e = **found;
            entry_lock el(e.m);
            if (e.owned || !e.pending.empty() || e.evicted) return false;
            held.front() = s.map.take(&e, h);
            if (!held.front()) return false;
            e.evicted = true;
            if (e.agent && opt_.hibernate) hibernated_.keep(e.key, *e.agent);
            gone = std::move(e.agent);
            pass_.retire(held);
        }
        gone.reset();
        counters_.evicted_manual.fetch_add(1, std::memory_order_relaxed);
        notify_evicted(key, evict_reason::manual);
        return true;
    }
    /// Runs `f(agent)` while owning the session (after any reply in progress): for tools added at run time,
    /// inspection, tests. Builds the agent if it is not resident.
    template <class F>
    decltype(auto) with_agent(std::string_view key, F&& f) {
        const std::shared_ptr<entry> e = own(key);
        struct release {
            session_cache* self;
            entry* e;
            std::string_view key;
            ~release() {
                respond_result r;
                self->drain(*e, key, {}, r);
            }
        } guard{this, e.get(), key};
        ensure_agent(*e, key);
        return f(*e->agent);
    }

private:
    using entry = detail::session_entry<Agent>;
    using entry_lock = detail::session_entry_lock;
    using shard = detail::session_shard<entry>;
    using shard_mutex = detail::shard_mutex;
    static constexpr std::size_t shard_count = detail::session_shard_count;
    [[nodiscard]] static std::size_t hash_of(std::string_view key) noexcept { return detail::session_hash(key); }

    shard& shard_of(const entry& e) noexcept { return shards_[e.hash % shard_count]; }
    template <class Wait>
    void wait_on_shard(entry& e, Wait wait) {
        detail::wait_on_shard(shard_of(e), e, std::move(wait));
    }

    [[nodiscard]] std::int64_t now_ns() const {
        return std::chrono::duration_cast<std::chrono::nanoseconds>(clock_.now().time_since_epoch()).count();
    }
    void touch(entry& e) { e.last_active.store(now_ns(), std::memory_order_release); }

    std::shared_ptr<entry> find(std::string_view key) const {
        const std::size_t h = hash_of(key);
        const shard& s = shards_[h % shard_count];
        const shard_mutex::reader l(s.m);
        const auto* e = s.map.find(key, h);
        return e ? *e : nullptr;
    }
    std::shared_ptr<entry> get_or_create(std::string_view key) {
        const std::size_t h = hash_of(key);
        shard& s = shards_[h % shard_count];
        {  // a resident session (the common case) is found under a shared lock
            const shard_mutex::reader r(s.m);
            if (const auto* found = s.map.find(key, h)) return *found;
        }
        std::lock_guard l(s.m);
        if (const auto* found = s.map.find(key, h)) return *found;  // inserted meanwhile
        auto e = std::allocate_shared<entry>(detail::pool_allocator<entry>(entry_pool_));
        e->key.assign(key);
        e->hash = h;
        const std::int64_t now = now_ns();
        e->last_active.store(now, std::memory_order_relaxed);
        s.map.insert(h, e);
        s.oldest = std::min(s.oldest, now);
        s.inserted = std::min(s.inserted, now);
        counters_.created.fetch_add(1, std::memory_order_relaxed);
        return e;
    }
    /// Takes ownership of the session (after the reply in progress); the caller releases it with drain().
    std::shared_ptr<entry> own(std::string_view key) {
        while (true) {
            std::shared_ptr<entry> e = get_or_create(key);
            entry_lock l(e->m);
            wait_on_shard(*e, [&](auto& cv) { cv.wait(l, [&] { return !e->owned; }); });
            if (e->evicted) continue;  // evicted while we waited: a new entry
            e->owned = true;
            return e;
        }
    }

    void ensure_agent(entry& e, std::string_view key) {
        if (e.agent) return;
        e.agent = make_(std::string(key));
        if (!e.agent) throw error(errc::invalid_argument, "session_cache: the factory returned no agent for " + std::string(key));
        if (opt_.hibernate) hibernated_.wake(key, *e.agent);
    }

    /// The owner's clear: window and store through the agent, then the agent itself (its run-time tools).
    void clear_owned(entry& e, std::string_view key) {
        try {
            ensure_agent(e, key);
            e.agent->clear();
            e.agent.reset();
        } catch (const std::exception& ex) {
            log_to(opt_.log, log_level::error, "session_cache: clearing " + std::string(key) + " failed: " + ex.what());
        }
        e.messages.store(0, std::memory_order_relaxed);
        e.bytes.store(0, std::memory_order_relaxed);
        e.tokens.store(0, std::memory_order_relaxed);
        e.last_compression.store(detail::no_activity, std::memory_order_relaxed);
        if (opt_.hibernate) hibernated_.forget(key);
        counters_.cleared.fetch_add(1, std::memory_order_relaxed);
        notify_evicted(key, evict_reason::cleared);
    }

    /// Runs the queued messages as turns, then lets go of the session. The queue is checked and ownership
    /// released under the same lock, so a message queued at any moment is either seen here or finds the
    /// session free.
    void drain(entry& e, std::string_view key, const chat_options& copt, respond_result& r) {
        entry_lock l(e.m);
        bool leased = false;
        while (!e.pending.empty()) {
            if (opt_.lease.acquire && !leased) {
                l.unlock();
                leased = detail::take_lease(opt_, e, key);
                l.lock();
                if (!leased) {  // another process answers this session: hand everything queued over, atomically
                    r.status = respond_status::elsewhere;
                    for (user_input& in : e.pending) r.handed_over.push_back(std::move(in));
                    e.pending.clear();
                    e.told_queued = false;
                    break;
                }
            }
            if (opt_.debounce.count() > 0 &&
                !detail::wait_out_debounce(e, opt_, [&](auto until) { wait_on_shard(e, [&](auto& cv) { cv.wait_until(l, until); }); }))
                break;  // a /stop emptied the queue meanwhile
            std::vector<user_input> batch = detail::next_batch(e, opt_);
            e.told_queued = false;
            e.stop = std::stop_source();
            const std::stop_token token = e.stop.get_token();
            l.unlock();
            try {
                ensure_agent(e, key);
                const detail::concurrency_limit::held slot(slots_);
                chat_options turn_options = copt;
                if (opt_.when_busy == busy_policy::steer)
                    turn_options.steer = [&e] { return detail::take_pending(e); };
                chat_result c = e.agent->chat(detail::merge(std::move(batch)), turn_options, token);
                e.messages.store(e.agent->window().size(), std::memory_order_relaxed);
                e.bytes.store(e.agent->window().resident_bytes(), std::memory_order_relaxed);
                e.tokens.store(e.agent->window().context_tokens(), std::memory_order_relaxed);
                touch(e);
                if (c.compressions > 0) e.last_compression.store(now_ns(), std::memory_order_relaxed);
                if (opt_.on_reply) call_back("on_reply", [&] { opt_.on_reply(key, c); });
                r.turns.push_back(std::move(c));
            } catch (...) {  // the factory failed (or worse): the turn fails, the session stays usable
                chat_result c;
                c.end = turn_end::failed;
                c.error = "session_cache: " + detail::describe_current_exception();
                log_to(opt_.log, log_level::error, c.error);
                r.turns.push_back(std::move(c));
            }
            probe(key, handoff_point::turn_done);
            l.lock();
            if (leased && e.pending.empty()) {  // give the lease back while still owning the session
                l.unlock();
                detail::give_lease(opt_, e, key);
                leased = false;
                l.lock();  // a message that came meanwhile takes the lease again (loop)
            }
        }
        e.owned = false;
        const bool waited_for = e.waiters > 0;
        l.unlock();
        if (waited_for) shard_of(e).idle.notify_all();
        probe(key, handoff_point::released);
    }

    /// A user's callback: what it throws is logged, never let through into a session's machinery.
    template <class F>
    void call_back(const char* what, F&& f) noexcept {
        try {
            f();
        } catch (...) {
            log_to(opt_.log, log_level::warn, std::string("session_cache: ") + what + " threw: " + detail::describe_current_exception());
        }
    }
    void probe(std::string_view key, handoff_point at) {
        if (opt_.on_handoff) call_back("on_handoff", [&] { opt_.on_handoff(key, at); });
    }
    void notify_evicted(std::string_view key, evict_reason why) {
        if (opt_.on_evicted) call_back("on_evicted", [&] { opt_.on_evicted(key, why); });
    }

    void janitor_tick() noexcept {
        try {
            tick();
        } catch (const std::exception& ex) {
            log_to(opt_.log, log_level::error, std::string("session_cache: janitor tick failed: ") + ex.what());
        }
    }

    factory_type make_;
    session_options opt_;
    Clock clock_;
    detail::eviction_pass<Agent, Eviction> pass_;
    detail::concurrency_limit slots_;
    detail::hibernation<Agent> hibernated_;
    detail::block_pool entry_pool_;  // before the shards: their entries go back to it
    shard shards_[shard_count];
    detail::session_counter_cells counters_;
    detail::periodic_worker janitor_;  // last: starts after every other member exists, stops first
};

} // namespace ania
