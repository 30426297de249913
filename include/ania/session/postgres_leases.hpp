// ania/session/postgres_leases.hpp -- one process at a time per session, across processes and machines: the
// session cache's lease hooks over postgres_store's leases, with a heartbeat. Needs libpq (ania-postgres).
// SPDX-License-Identifier: MIT
//
//     ania::postgres_store store({{.dsn = dsn}});
//     ania::background_writer<ania::postgres_store> writer(store);
//     ania::postgres_session_leases leases(store, std::chrono::seconds(30));
//     ania::session_options o = ania::from_config<ania::session_options>(cfg);
//     o.lease = leases.hooks(std::chrono::seconds(5));   // wait up to 5 s for another process, then hand over
//
// A session answers only while this process holds its lease; the heartbeat renews every held lease at a
// third of the TTL; a process that dies or stalls loses its leases after the TTL, and its late writes are
// fenced off (errc::stale_writer). When a lease is taken and the session's history changed since this
// process last let it go (another process answered meanwhile), the resident agent is rebuilt from the store.
#pragma once

#include <chrono>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>

#include <ania/detail/worker.hpp>
#include <ania/log.hpp>
#include <ania/session/session_cache.hpp>
#include <ania/store/postgres_store.hpp>

namespace ania {

class postgres_session_leases {
public:
    explicit postgres_session_leases(postgres_store& store, std::chrono::milliseconds ttl = std::chrono::seconds(30),
                                     log_sink log = stderr_log_sink())
        : store_(store), ttl_(ttl), log_(std::move(log)) {
        heartbeat_.start(ttl_ / 3, [this] { beat(); });
    }

    postgres_session_leases(const postgres_session_leases&) = delete;
    postgres_session_leases& operator=(const postgres_session_leases&) = delete;
    ~postgres_session_leases() {
        heartbeat_.stop();
        for (auto& [key, h] : held_) {
            try {
                store_.release(h);
            } catch (...) {  // the server is gone: the leases expire by themselves
            }
        }
    }

    /// The hooks for session_options::lease.
    [[nodiscard]] session_lease_hooks hooks(std::chrono::milliseconds wait = std::chrono::milliseconds(0)) {
        session_lease_hooks h;
        h.acquire = [this](std::string_view key, bool& fresh) { return acquire(key, fresh); };
        h.release = [this](std::string_view key) { release(key); };
        h.wait = wait;
        return h;
    }

    bool acquire(std::string_view key, bool& fresh) {
        const auto lease = store_.try_lease(key, ttl_);
        if (!lease) return false;
        const history_version now = store_.version(key);
        std::lock_guard l(mu_);
        const auto seen = last_seen_.find(std::string(key));
        fresh = seen == last_seen_.end() || seen->second != now;
        held_.insert_or_assign(std::string(key), *lease);
        return true;
    }

    void release(std::string_view key) {
        std::optional<session_lease> h;
        {
            std::lock_guard l(mu_);
            const auto it = held_.find(std::string(key));
            if (it == held_.end()) return;
            h = std::move(it->second);
            held_.erase(it);
        }
        last(key, store_.version(key));
        store_.release(*h);
    }

    [[nodiscard]] std::size_t held() const {
        std::lock_guard l(mu_);
        return held_.size();
    }
    [[nodiscard]] std::chrono::milliseconds ttl() const noexcept { return ttl_; }

private:
    void last(std::string_view key, const history_version& v) {
        std::lock_guard l(mu_);
        last_seen_.insert_or_assign(std::string(key), v);
        if (last_seen_.size() > 100'000) last_seen_.clear();  // a bound: forgetting only costs a reload
    }

    /// Every third of the TTL (on the heartbeat thread): renews the leases held.
    void beat() noexcept {
        std::vector<session_lease> now;
        {
            std::lock_guard l(mu_);
            now.reserve(held_.size());
            for (const auto& [key, h] : held_) now.push_back(h);
        }
        for (const session_lease& h : now) {
            try {
                if (!store_.renew(h)) log_to(log_, log_level::error, "postgres_session_leases: a lease was lost (expired or taken): its writes are fenced off");
            } catch (const std::exception& e) {
                log_to(log_, log_level::warn, std::string("postgres_session_leases: renewing failed: ") + e.what());
            }
        }
    }

    postgres_store& store_;
    std::chrono::milliseconds ttl_;
    log_sink log_;
    mutable std::mutex mu_;
    std::unordered_map<std::string, session_lease> held_;
    std::unordered_map<std::string, history_version> last_seen_;
    detail::periodic_worker heartbeat_;  // last: stops first
};

} // namespace ania
