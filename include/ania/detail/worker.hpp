// ania/detail/worker.hpp -- the one worker-thread idiom of the library: a std::jthread whose stop_token ends it,
// and waits that the token interrupts (std::condition_variable_any), so that no thread keeps a stop flag of its
// own. The writer, the session janitor, the lease heartbeat and the embedding backfill run on it.
// SPDX-License-Identifier: MIT
#pragma once

#include <chrono>
#include <condition_variable>
#include <mutex>
#include <stop_token>
#include <thread>
#include <utility>

namespace ania::detail {

/// Calls `f()` every `period` (and once at the start when `call_first`) on a thread of its own until stopped
/// (stop() or the destructor, which join). A stop interrupts the wait at once; a call in progress finishes
/// first. `f` must not throw (catch inside).
class periodic_worker {
public:
    periodic_worker() = default;
    periodic_worker(const periodic_worker&) = delete;
    periodic_worker& operator=(const periodic_worker&) = delete;
    ~periodic_worker() { stop(); }

    template <class F>
    void start(std::chrono::nanoseconds period, F f, bool call_first = false) {
        thread_ = std::jthread([this, period, call_first, f = std::move(f)](std::stop_token stop) mutable {
            if (call_first) f();
            std::unique_lock l(m_);
            while (true) {
                wake_.wait_for(l, stop, period, [] { return false; });  // the token wakes it: no flag of our own
                if (stop.stop_requested()) return;
                l.unlock();
                f();
                l.lock();
            }
        });
    }
    /// Ends the thread (after the call in progress) and joins it. Idempotent.
    void stop() {
        if (!thread_.joinable()) return;
        thread_.request_stop();
        thread_.join();
    }
    [[nodiscard]] bool running() const noexcept { return thread_.joinable(); }

private:
    std::mutex m_;
    std::condition_variable_any wake_;
    std::jthread thread_;  // last: its thread starts after the members it uses exist, and stops first
};

} // namespace ania::detail
