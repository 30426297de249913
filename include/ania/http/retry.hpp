// ania/http/retry.hpp -- when to try a failed call again, and how long to wait first.
// SPDX-License-Identifier: MIT
#pragma once

#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <mutex>
#include <optional>
#include <stop_token>

namespace ania::http {

/// Exponential back-off with jitter, bounded by a count and by a time budget. Only failures a later attempt
/// can cure are retried (429, 5xx, connection errors and timeouts; never 400/401/403, never a cancelled
/// call); the client decides which, this decides when.
struct retry_options {
    int max_retries = 2;                           ///< attempts after the first; 0 disables
    std::chrono::milliseconds initial{500};        ///< the first wait (before jitter)
    std::chrono::milliseconds max_wait{8'000};     ///< no single computed wait is longer (a Retry-After may be: see budget)
    /// All waits and retried attempts of one call together: a retry that would start after the budget is
    /// spent is not made (a turn has a user waiting on it). A server's Retry-After longer than what is left
    /// ends the retries at once instead of sleeping past the budget.
    std::chrono::milliseconds budget{60'000};
};

/// The wait before retry number `retry` (1-based): min(max_wait, initial * 2^(retry-1)), jittered uniformly
/// into [w/2, w] so that many clients rejected together do not come back together; a server's Retry-After
/// replaces it when longer. `rng` is the caller's state (any seed; xorshift).
[[nodiscard]] inline std::chrono::milliseconds backoff(const retry_options& o, int retry,
                                                       std::optional<std::chrono::milliseconds> retry_after,
                                                       std::uint64_t& rng) noexcept {
    const int shift = std::clamp(retry - 1, 0, 30);
    const std::int64_t base = std::min<std::int64_t>(o.max_wait.count(), o.initial.count() << std::min(shift, 20));
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    const std::int64_t half = base / 2;
    const std::int64_t w = half + (base - half > 0 ? static_cast<std::int64_t>(rng % static_cast<std::uint64_t>(base - half + 1)) : 0);
    if (retry_after && retry_after->count() > w) return *retry_after;
    return std::chrono::milliseconds(w);
}

/// Sleeps `d` unless `stop` is requested first. False when cancelled.
inline bool sleep_unless_stopped(std::chrono::milliseconds d, const std::stop_token& stop) {
    std::mutex mu;
    std::condition_variable_any cv;
    std::unique_lock lock(mu);
    cv.wait_for(lock, stop, d, [] { return false; });  // false either way: ask the token which it was
    return !stop.stop_requested();
}

} // namespace ania::http
