// ania/session/lease.hpp -- a session cache's side of cross-process ownership (session_lease_hooks): take a
// session's lease before it answers, give it back once its queue is empty. Not API.
// SPDX-License-Identifier: MIT
#pragma once

#include <chrono>
#include <exception>
#include <string>
#include <string_view>
#include <thread>

#include <ania/log.hpp>
#include <ania/session/options.hpp>

namespace ania::detail {

/// Takes the session's lease (retrying for lease.wait). A lease taken afresh means another process may have
/// answered meanwhile: the resident agent is dropped, to be rebuilt from the store.
template <class Entry>
[[nodiscard]] bool take_lease(const session_options& opt, Entry& e, std::string_view key) {
    const auto until = std::chrono::steady_clock::now() + opt.lease.wait;
    while (true) {
        bool fresh = false;
        bool ok = false;
        try {
            ok = opt.lease.acquire(key, fresh);
        } catch (const std::exception& ex) {
            log_to(opt.log, log_level::error, "session_cache: taking the lease of " + std::string(key) + " failed: " + ex.what());
        }
        if (ok) {
            if (fresh && e.agent) e.agent.reset();
            return true;
        }
        if (std::chrono::steady_clock::now() >= until) return false;
        std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
}

/// Flushes the session's writes (they are fenced by the lease) and gives the lease back.
template <class Entry>
void give_lease(const session_options& opt, Entry& e, std::string_view key) {
    try {
        if (e.agent) e.agent->writer().flush();
        opt.lease.release(key);
    } catch (const std::exception& ex) {
        log_to(opt.log, log_level::error, "session_cache: releasing the lease of " + std::string(key) + " failed: " + ex.what());
    }
}

} // namespace ania::detail
