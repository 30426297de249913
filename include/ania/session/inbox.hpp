// ania/session/inbox.hpp -- what a session cache does with a message before a turn: the queue of a busy session
// (busy_policy, max_pending) and the merge of queued messages into one turn. (The global admission limit,
// max_concurrent_replies, is a detail::concurrency_limit: detail/concurrency_limit.hpp.) Not API.
// SPDX-License-Identifier: MIT
#pragma once

#include <algorithm>
#include <chrono>
#include <cstddef>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include <ania/agent/chat.hpp>
#include <ania/session/entry.hpp>
#include <ania/session/options.hpp>
#include <ania/session/results.hpp>

namespace ania::detail {

/// Under the entry's lock: queues `input` as the options say. False when busy_policy::reject refuses it (the
/// session is responding); `r.dropped` counts what a full queue pushed out.
template <class Entry>
[[nodiscard]] bool enqueue(Entry& e, user_input&& input, const session_options& opt, respond_result& r,
                           session_counter_cells& counters) {
    if (e.owned && opt.when_busy == busy_policy::reject) return false;
    if (e.owned && opt.when_busy == busy_policy::latest_only && !e.pending.empty()) {
        r.dropped = e.pending.size();
        counters.dropped_pending.fetch_add(r.dropped, std::memory_order_relaxed);
        e.pending.clear();
    }
    if (opt.max_pending > 0 && e.pending.size() >= opt.max_pending) {
        e.pending.erase(e.pending.begin());  // at most max_pending moves: bounded
        r.dropped = 1;
        counters.dropped_pending.fetch_add(1, std::memory_order_relaxed);
    }
    e.pending.push_back(std::move(input));
    return true;
}

/// Under the entry's lock: the next turn's messages (one, or all of them: busy_policy::one_per_message).
template <class Entry>
[[nodiscard]] std::vector<user_input> next_batch(Entry& e, const session_options& opt) {
    std::vector<user_input> batch;
    if (opt.when_busy == busy_policy::one_per_message && e.pending.size() > 1) {
        batch.push_back(std::move(e.pending.front()));
        e.pending.erase(e.pending.begin());
    } else {
        batch.swap(e.pending);
    }
    return batch;
}

/// busy_policy::steer: everything queued, taken by the running turn after its tool batch (the entry's lock is
/// taken here).
template <class Entry>
[[nodiscard]] std::vector<user_input> take_pending(Entry& e) {
    std::lock_guard l(e.m);
    std::vector<user_input> more;
    more.swap(e.pending);
    e.told_queued = false;
    return more;
}

/// Debounce (under the entry's lock, which `wait_until(time_point)` releases while it waits): until no message
/// has arrived for opt.debounce, or opt.debounce_max since the first. False when the queue was emptied meanwhile
/// (a /stop).
template <class Entry, class WaitUntil>
[[nodiscard]] bool wait_out_debounce(Entry& e, const session_options& opt, WaitUntil wait_until) {
    const auto cap = std::chrono::steady_clock::now() + opt.debounce_max;
    while (!e.pending.empty()) {
        const auto quiet = std::min(cap, e.last_arrival + opt.debounce);
        if (std::chrono::steady_clock::now() >= quiet) break;
        wait_until(quiet);
    }
    return !e.pending.empty();
}

/// Messages queued behind a reply become one turn: their texts in arrival order, one per line, and all
/// their images.
[[nodiscard]] inline user_input merge(std::vector<user_input> batch) {
    if (batch.size() == 1) return std::move(batch.front());
    user_input out(std::string{});
    for (user_input& in : batch) {
        if (!out.text.empty() && !in.text.empty()) out.text.push_back('\n');
        out.text += in.text;
        for (std::string& img : in.images) out.images.push_back(std::move(img));
    }
    return out;
}

} // namespace ania::detail
