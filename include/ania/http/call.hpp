// ania/http/call.hpp -- what every model client shares around http::post: the retry loop, the failure of a
// transfer that produced no answer, the endpoint URL, and keeping the key out of every text.
// SPDX-License-Identifier: MIT
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <vector>
#include <optional>
#include <stop_token>
#include <string>
#include <string_view>
#include <utility>

#include <ania/concepts.hpp>
#include <ania/http/curl.hpp>
#include <ania/http/retry.hpp>
#include <ania/http/sse.hpp>
#include <ania/json.hpp>
#include <ania/log.hpp>
#include <ania/wire_cache.hpp>

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


/// One attempt of a model call, as with_retries sees it.
struct attempt_result {
    completion c;
    std::optional<std::chrono::milliseconds> retry_after{};
    bool may_retry = true;  ///< false: a retry could repeat what the caller already saw, or the answer was final
};

/// A body as the transport sends it: one string, or a wire_body's three pieces (borrowed for the call).
struct body_view {
    std::string_view head, shared, tail;
    body_view(const std::string& s) noexcept : head(s) {}  // NOLINT: any string body is a body
    body_view(const wire_body& b) noexcept : head(b.head), shared(b.shared), tail(b.tail) {}  // NOLINT
};

/// Where and how a client posts: what every attempt of every call shares.
struct endpoint_call {
    std::string url;
    std::vector<std::string> headers;
    timeouts limits{};
    std::size_t max_answer_bytes = std::size_t(32) << 20;

    [[nodiscard]] request make(const body_view& body, const std::stop_token& stop) const {
        request r;
        r.url = url;
        r.headers = headers;
        r.body = body.head;
        r.body_shared = body.shared;
        r.body_tail = body.tail;
        r.limits = limits;
        r.stop = stop;
        r.max_body = max_answer_bytes;
        return r;
    }
    [[nodiscard]] parse_limits answer_limits() const {
        parse_limits lim;
        lim.max_bytes = max_answer_bytes;
        return lim;
    }

    /// A non-streamed attempt: transfer failures and error statuses typed (`error_of(status, body)`), a 2xx
    /// body handed to `parse(body, limits)`.
    template <class ErrorOf, class Parse>
    [[nodiscard]] attempt_result plain(handle_pool& pool, const body_view& body, const std::stop_token& stop, ErrorOf&& error_of,
                                       Parse&& parse) const {
        const response r = post(pool, make(body, stop));
        if (r.result != outcome::done) return {transfer_failure(r, max_answer_bytes), r.retry_after, true};
        if (r.status < 200 || r.status >= 300) return {error_of(static_cast<int>(r.status), r.body), r.retry_after, true};
        // A 2xx body may still hold a retryable error (a proxy's 200 with an `error` member): with_retries
        // decides by its cause, as for an error status.
        return {parse(r.body, answer_limits()), std::nullopt, true};
    }

    /// A streamed attempt: the body decoded as SSE into `acc` (add(data), failed(), finish() &&, on_text(f)),
    /// text passed to `on_text`. `fallback(head, limits)` reads a 2xx answer that held no event at all (a
    /// server that ignored the stream switch) from its first MiB; it may return nullopt (then `acc` decides).
    template <class Accumulator, class ErrorOf, class Fallback>
    [[nodiscard]] attempt_result streamed(handle_pool& pool, const body_view& body, const std::stop_token& stop, Accumulator& acc,
                                          const std::function<void(std::string_view)>& on_text, ErrorOf&& error_of,
                                          Fallback&& fallback) const {
        bool delivered = false;  // text reached the caller: a retry would deliver it twice
        acc.on_text([&](std::string_view piece) {
            delivered = true;
            if (on_text) on_text(piece);
        });
        sse_decoder sse;
        bool any_event = false;
        std::string head;
        const auto on_event = [&](const sse_event& ev) {
            // A keep-alive ("data:" with nothing, as proxies and relays send) is no event of the answer: not
            // parsed, and it does not stop a plain-JSON answer from being read as one.
            if (is_keep_alive(ev.data)) return;
            any_event = true;
            acc.add(ev.data);
        };
        request req = make(body, stop);
        req.on_data = [&](std::string_view bytes) {
            if (!any_event && head.size() < (std::size_t(1) << 20)) head.append(bytes);
            return sse.feed(bytes, on_event) && !acc.failed();
        };
        const response r = post(pool, req);
        if (r.result == outcome::done && (r.status < 200 || r.status >= 300))
            return {error_of(static_cast<int>(r.status), r.body), r.retry_after, true};
        // An error the server sent mid-stream (Anthropic's overloaded_error event, OpenRouter's error chunk) is
        // retried like its HTTP status would be, unless text already reached the caller.
        if (acc.failed()) return {std::move(acc).finish(), std::nullopt, !delivered};
        if (r.result != outcome::done) {
            completion c = transfer_failure(r, max_answer_bytes);
            if (any_event) c.error += " (mid-stream)";
            return {std::move(c), r.retry_after, !delivered};
        }
        sse.finish(on_event);
        if (!any_event && !head.empty())
            if (std::optional<completion> c = fallback(head, answer_limits())) return {std::move(*c), std::nullopt, false};
        return {std::move(acc).finish(), std::nullopt, false};
    }
};

} // namespace ania::http
