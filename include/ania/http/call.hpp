// ania/http/call.hpp -- what every model client shares around http::post: the retry loop, the failure of a
// transfer that produced no answer, the endpoint URL, and keeping the key out of every text.
// SPDX-License-Identifier: MIT
#pragma once

#include <chrono>
#include <cstdint>
#include <optional>
#include <stop_token>
#include <string>
#include <string_view>
#include <utility>

#include <ania/concepts.hpp>
#include <ania/http/curl.hpp>
#include <ania/http/retry.hpp>
#include <ania/log.hpp>

namespace ania::http {

/// `s` with every occurrence of `secret` replaced (keys shorter than 4 bytes are not worth hiding and would
/// garble the text).
[[nodiscard]] inline std::string redact(std::string s, std::string_view secret) {
    if (secret.size() < 4) return s;
    for (std::size_t at = s.find(secret); at != std::string::npos; at = s.find(secret, at + 10))
        s.replace(at, secret.size(), "[redacted]");
    return s;
}

[[nodiscard]] inline std::string endpoint(std::string_view base, std::string_view path) {
    std::string url(base);
    while (!url.empty() && url.back() == '/') url.pop_back();
    url += path;
    return url;
}

/// The failure of a transfer that produced no HTTP answer, or whose answer was cut.
[[nodiscard]] inline completion transfer_failure(const response& r, std::size_t max_bytes) {
    call_failure f;
    f.http_status = static_cast<int>(r.status);
    switch (r.result) {
    case outcome::cancelled:
        f.kind = failure_kind::cancelled;
        return completion::failure_of("cancelled", f);
    case outcome::stalled:
        f.kind = failure_kind::timeout;
        f.retryable = true;
        return completion::failure_of("the server stalled: no byte within the stall timeout", f);
    case outcome::timeout:
        f.kind = failure_kind::timeout;
        f.retryable = true;
        return completion::failure_of("timeout: " + r.error, f);
    case outcome::too_large:
        f.kind = failure_kind::malformed;
        return completion::failure_of("the answer is larger than " + std::to_string(max_bytes) + " bytes", f);
    case outcome::aborted:
        f.kind = failure_kind::malformed;
        return completion::failure_of("the stream could not be read", f);
    case outcome::network:
    case outcome::done: break;
    }
    f.kind = failure_kind::network;
    f.retryable = true;
    return completion::failure_of("network: " + r.error, f);
}

/// Calls `attempt()` until it succeeds, fails for good, or the retry count or budget is spent; waits between
/// attempts per `retry` (Retry-After honoured). `attempt()` returns something with members c (the completion),
/// retry_after and may_retry (false: a retry could repeat what the caller already saw).
template <class Attempt>
[[nodiscard]] completion with_retries(const retry_options& retry, const std::stop_token& stop, const log_sink& log,
                                      std::string_view secret, Attempt&& attempt) {
    const auto t0 = std::chrono::steady_clock::now();
    std::uint64_t rng = static_cast<std::uint64_t>(t0.time_since_epoch().count()) | 1u;
    for (int n = 1;; ++n) {
        auto r = attempt();
        completion& c = r.c;
        c.cause.attempts = n;
        c.error = redact(std::move(c.error), secret);
        if (c.ok || !c.cause.retryable || !r.may_retry || n > retry.max_retries || stop.stop_requested()) return std::move(c);
        const auto wait = backoff(retry, n, r.retry_after, rng);
        if (std::chrono::steady_clock::now() - t0 + wait > retry.budget) {
            c.error += " (not retried: the retry budget would be exceeded)";
            return std::move(c);
        }
        log_to(log, log_level::warn, "model call failed (" + c.error + "); retry " + std::to_string(n) + " in " +
                                         std::to_string(wait.count()) + " ms");
        if (!sleep_unless_stopped(wait, stop)) {
            call_failure f;
            f.kind = failure_kind::cancelled;
            f.attempts = n;
            return completion::failure_of("cancelled while waiting to retry", f, c.used);
        }
    }
}


} // namespace ania::http
