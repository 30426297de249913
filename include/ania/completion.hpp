// ania/completion.hpp -- what one model call returned: the reply and its usage, or a typed failure (failure_kind, call_failure).
// SPDX-License-Identifier: MIT
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <utility>

#include <ania/message.hpp>
#include <ania/usage.hpp>

namespace ania {

/// Why a model call failed, as far as the client could tell. The agent acts on two of them:
/// `context_length_exceeded` (compress the window and retry the call once) and `cancelled`.
enum class failure_kind : std::uint8_t {
    other,                    ///< a client that does not say (the scripted ones, a user's own)
    network,                  ///< no connection, reset, DNS, TLS: nothing usable arrived
    timeout,                  ///< connect / total / stall timeout
    cancelled,                ///< the request's stop token was requested
    rate_limited,             ///< HTTP 429 that waiting cures (a rate limit, not the quota)
    quota_exceeded,           ///< the account is out of credit or over its quota (OpenAI insufficient_quota,
                              ///< Anthropic billing_error): not transient, never retried: add credit, do not wait
    server,                   ///< HTTP 5xx (529 overloaded too), or an error the server sent inside a 200 answer or stream
    auth,                     ///< HTTP 401 / 403
    bad_request,              ///< another 4xx
    context_length_exceeded,  ///< the prompt does not fit the model (recognised from the provider's error)
    malformed,                ///< an answer that is not the protocol (bad JSON, no choice, too large)
};

[[nodiscard]] constexpr std::string_view to_string(failure_kind k) noexcept {
    switch (k) {
    case failure_kind::other: return "other";
    case failure_kind::network: return "network";
    case failure_kind::timeout: return "timeout";
    case failure_kind::cancelled: return "cancelled";
    case failure_kind::rate_limited: return "rate_limited";
    case failure_kind::quota_exceeded: return "quota_exceeded";
    case failure_kind::server: return "server";
    case failure_kind::auth: return "auth";
    case failure_kind::bad_request: return "bad_request";
    case failure_kind::context_length_exceeded: return "context_length_exceeded";
    case failure_kind::malformed: return "malformed";
    }
    return "other";
}

/// The typed part of a failure: what a caller branches on (the readable text is completion::error).
struct call_failure {
    failure_kind kind = failure_kind::other;
    int http_status = 0;        ///< 0: no HTTP answer
    std::string type;           ///< the provider's error type ("invalid_request_error"), when it sent one
    std::string code;           ///< the provider's error code ("context_length_exceeded"), when it sent one
    bool retryable = false;     ///< worth another attempt later (429, 5xx, network); the client's own retries are spent
    int attempts = 1;           ///< HTTP attempts made, retries included
};

/// What one chat-completions call returned. A client reports failure as `ok == false` with a readable
/// `error` (network, HTTP status, malformed body, empty choice) and a typed `cause`, not by throwing;
/// `used` may hold tokens even on failure (a server that answered, but uselessly).
struct completion {
    bool ok = false;
    message reply;
    ania::usage used;
    std::string error;
    call_failure cause{};         ///< why, typed (meaningful when !ok)
    std::string finish_reason{};  ///< "stop", "tool_calls", "length", ... as the provider said (may be empty)

    [[nodiscard]] static completion success(message m, ania::usage u = {}) {
        completion c;
        c.ok = true;
        c.reply = std::move(m);
        c.used = u;
        return c;
    }
    [[nodiscard]] static completion failure_of(std::string why, call_failure f, ania::usage u = {}) {
        completion c;
        c.used = u;
        c.error = std::move(why);
        c.cause = std::move(f);
        return c;
    }
    [[nodiscard]] static completion failure(std::string why, ania::usage u = {}) {
        return failure_of(std::move(why), {}, u);
    }
};

} // namespace ania
