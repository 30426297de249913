// ania/openai/client.hpp -- a chat_client for any OpenAI-compatible chat-completions endpoint, over libcurl.
// SPDX-License-Identifier: MIT
//
//     ania::openai::client llm({.base_url = "https://api.deepseek.com", .api_key = key, .model = "deepseek-chat"});
//     ania::completion c = llm.complete({messages, tools, stop});
//
// Needs libcurl: `dependency('ania-openai')`. Thread safety: one client may be used from any number of threads
// at once (and copies share its connections): every call takes its own curl handle from a shared pool, so
// calls never wait on each other, and a handle goes back to the pool with its connection kept alive.
// The API key is sent in the Authorization header only; it is removed from every error text and log line
// the client writes (a server that echoes it back included).
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <ania/concepts.hpp>
#include <ania/config.hpp>
#include <ania/http/curl.hpp>
#include <ania/http/retry.hpp>
#include <ania/http/sse.hpp>
#include <ania/json.hpp>
#include <ania/log.hpp>
#include <ania/openai/wire.hpp>

namespace ania::openai {

/// How a client reaches its model. `from_config<client_options>(cfg)` fills it from `llm.*`.
struct client_options {
    std::string base_url{"https://api.openai.com/v1"};  ///< ".../chat/completions" is appended
    std::string api_key{};                               ///< empty: no Authorization header (a local server)
    std::string model{};
    bool stream = false;                                 ///< SSE; the answer is the same, text arrives early
    http::timeouts timeouts{};
    http::retry_options retry{};
    json extra = json::object();                         ///< request members: temperature, tool_choice, ...
    write_options messages{};                            ///< reasoning_content replay, call-only content
    std::size_t max_answer_bytes = std::size_t(32) << 20;  ///< a longer answer is a malformed one, not a crash
    std::vector<std::string> headers{};                  ///< more "Name: value" lines (an org id, a gateway key)
    log_sink log{};                                      ///< retries are logged at warn (never the key)
    /// Streaming: each piece of reply text as it arrives, from the calling thread.
    std::function<void(std::string_view)> on_text{};
};

namespace detail {

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
[[nodiscard]] inline completion transfer_failure(const http::response& r, std::size_t max_bytes) {
    call_failure f;
    f.http_status = static_cast<int>(r.status);
    switch (r.result) {
    case http::outcome::cancelled:
        f.kind = failure_kind::cancelled;
        return completion::failure_of("cancelled", f);
    case http::outcome::stalled:
        f.kind = failure_kind::timeout;
        f.retryable = true;
        return completion::failure_of("the server stalled: no byte within the stall timeout", f);
    case http::outcome::timeout:
        f.kind = failure_kind::timeout;
        f.retryable = true;
        return completion::failure_of("timeout: " + r.error, f);
    case http::outcome::too_large:
        f.kind = failure_kind::malformed;
        return completion::failure_of("the answer is larger than " + std::to_string(max_bytes) + " bytes", f);
    case http::outcome::aborted:
        f.kind = failure_kind::malformed;
        return completion::failure_of("the stream could not be read", f);
    case http::outcome::network:
    case http::outcome::done: break;
    }
    f.kind = failure_kind::network;
    f.retryable = true;
    return completion::failure_of("network: " + r.error, f);
}

/// Calls `attempt()` until it succeeds, fails for good, or the retry count or budget is spent; waits between
/// attempts per `retry` (Retry-After honoured). `attempt()` returns something with members c (the completion),
/// retry_after and may_retry (false: a retry could repeat what the caller already saw).
template <class Attempt>
[[nodiscard]] completion with_retries(const http::retry_options& retry, const std::stop_token& stop, const log_sink& log,
                                      std::string_view secret, Attempt&& attempt) {
    const auto t0 = std::chrono::steady_clock::now();
    std::uint64_t rng = static_cast<std::uint64_t>(t0.time_since_epoch().count()) | 1u;
    for (int n = 1;; ++n) {
        auto r = attempt();
        completion& c = r.c;
        c.cause.attempts = n;
        c.error = redact(std::move(c.error), secret);
        if (c.ok || !c.cause.retryable || !r.may_retry || n > retry.max_retries || stop.stop_requested()) return std::move(c);
        const auto wait = http::backoff(retry, n, r.retry_after, rng);
        if (std::chrono::steady_clock::now() - t0 + wait > retry.budget) {
            c.error += " (not retried: the retry budget would be exceeded)";
            return std::move(c);
        }
        log_to(log, log_level::warn, "model call failed (" + c.error + "); retry " + std::to_string(n) + " in " +
                                         std::to_string(wait.count()) + " ms");
        if (!http::sleep_unless_stopped(wait, stop)) {
            call_failure f;
            f.kind = failure_kind::cancelled;
            f.attempts = n;
            return completion::failure_of("cancelled while waiting to retry", f, c.used);
        }
    }
}

} // namespace detail

/// A chat_client over HTTP: non-streaming or SSE, retries, timeouts, cancellation (see the file comment).
class client {
public:
    explicit client(client_options opt) : opt_(std::move(opt)), pool_(std::make_shared<http::handle_pool>()) {
        url_ = detail::endpoint(opt_.base_url, "/chat/completions");
        headers_.push_back("Content-Type: application/json");
        if (!opt_.api_key.empty()) headers_.push_back("Authorization: Bearer " + opt_.api_key);
        if (opt_.stream) headers_.push_back("Accept: text/event-stream");
        for (const std::string& h : opt_.headers) headers_.push_back(h);
        body_.model = opt_.model;
        body_.stream = opt_.stream;
        body_.extra = opt_.extra;
        body_.messages = opt_.messages;
    }

    [[nodiscard]] completion complete(const chat_request& request) {
        std::string body;
        try {
            body = request_body(request, body_);
        } catch (const std::exception& e) {  // e.g. a tool definition that cannot be written
            return completion::failure_of(std::string("the request could not be written: ") + e.what(), {});
        }
        return detail::with_retries(opt_.retry, request.stop, opt_.log, opt_.api_key,
                                    [&] { return opt_.stream ? streamed(body, request.stop) : plain(body, request.stop); });
    }

    [[nodiscard]] const client_options& options() const noexcept { return opt_; }

private:
    struct attempt_result {
        completion c;
        std::optional<std::chrono::milliseconds> retry_after;
        bool may_retry = true;
    };

    [[nodiscard]] http::request base_request(const std::string& body, const std::stop_token& stop) const {
        http::request r;
        r.url = url_;
        r.headers = headers_;
        r.body = body;
        r.limits = opt_.timeouts;
        r.stop = stop;
        r.max_body = opt_.max_answer_bytes;
        return r;
    }

    attempt_result plain(const std::string& body, const std::stop_token& stop) {
        const http::response r = http::post(*pool_, base_request(body, stop));
        if (r.result != http::outcome::done) return {detail::transfer_failure(r, opt_.max_answer_bytes), r.retry_after, true};
        if (r.status < 200 || r.status >= 300) return {error_answer(static_cast<int>(r.status), r.body), r.retry_after, true};
        parse_limits lim;
        lim.max_bytes = opt_.max_answer_bytes;
        return {parse_answer(r.body, lim), std::nullopt, false};
    }

    attempt_result streamed(const std::string& body, const std::stop_token& stop) {
        parse_limits lim;
        lim.max_bytes = opt_.max_answer_bytes;
        stream_accumulator acc(lim);
        bool delivered = false;  // text reached the caller: a retry would deliver it twice
        acc.on_text([&](std::string_view piece) {
            delivered = true;
            if (opt_.on_text) opt_.on_text(piece);
        });
        http::sse_decoder sse;
        bool any_event = false;
        std::string head;  // the first bytes: a server that ignores stream:true answers with plain JSON
        http::request req = base_request(body, stop);
        req.on_data = [&](std::string_view bytes) {
            if (!any_event && head.size() < (std::size_t(1) << 20)) head.append(bytes);
            return sse.feed(bytes, [&](const http::sse_event& ev) {
                any_event = true;
                acc.add(ev.data);
            }) && !acc.failed();
        };
        const http::response r = http::post(*pool_, req);
        if (r.result == http::outcome::done && (r.status < 200 || r.status >= 300))
            return {error_answer(static_cast<int>(r.status), r.body), r.retry_after, true};
        if (acc.failed()) return {std::move(acc).finish(), std::nullopt, false};
        if (r.result != http::outcome::done) {
            completion c = detail::transfer_failure(r, opt_.max_answer_bytes);
            if (any_event) c.error += " (mid-stream)";
            return {std::move(c), r.retry_after, !delivered};
        }
        sse.finish([&](const http::sse_event& ev) {
            any_event = true;
            acc.add(ev.data);
        });
        if (!any_event && !head.empty()) return {parse_answer(head, lim), std::nullopt, false};
        return {std::move(acc).finish(), std::nullopt, false};
    }

    client_options opt_;
    std::shared_ptr<http::handle_pool> pool_;
    std::string url_;
    std::vector<std::string> headers_;
    body_options body_;
};

static_assert(chat_client<client>);

/// The client options of `llm.*` with another endpoint's base_url, api_key and model laid over them (an
/// empty one keeps llm's): what compressor.* and ocr.* configure.
[[nodiscard]] inline client_options options_over(const client_options& llm, const std::string& base_url,
                                                 const std::string& api_key, const std::string& model) {
    client_options o = llm;
    if (!base_url.empty()) o.base_url = base_url;
    if (!api_key.empty()) o.api_key = api_key;
    if (!model.empty()) o.model = model;
    o.on_text = {};  // a summary or an image description is not streamed to the user
    return o;
}

/// The compression client's options (SPEC §1): `compressor.*` when compressor.model is set, else llm's own.
[[nodiscard]] client_options compression_options(const config& c);
/// The vision client's options (SPEC §5): `ocr.*` (its base_url and model have defaults; the key is ocr's).
[[nodiscard]] client_options vision_options(const config& c);

} // namespace ania::openai

namespace ania {

/// `llm.*`: endpoint, key, model, stream, the timeouts, max_retries and the extra request members.
template <>
[[nodiscard]] inline openai::client_options from_config<openai::client_options>(const config& c) {
    openai::client_options o;
    if (!c.llm.base_url.empty()) o.base_url = c.llm.base_url;
    o.api_key = c.llm.api_key;
    o.model = c.llm.model;
    o.stream = c.llm.stream;
    o.timeouts.connect = std::chrono::milliseconds(c.llm.connect_timeout_ms);
    o.timeouts.total = std::chrono::milliseconds(c.llm.timeout_ms);
    o.timeouts.stall = std::chrono::milliseconds(c.llm.stall_timeout_ms);
    o.retry.max_retries = static_cast<int>(c.llm.max_retries);
    o.extra = c.llm.extra;
    o.messages.include_reasoning = c.llm.replay_reasoning;
    return o;
}

} // namespace ania

namespace ania::openai {

[[nodiscard]] inline client_options compression_options(const config& c) {
    const client_options llm = from_config<client_options>(c);
    if (c.compressor.model.empty()) return options_over(llm, {}, {}, {});
    return options_over(llm, c.compressor.base_url, c.compressor.api_key, c.compressor.model);
}

[[nodiscard]] inline client_options vision_options(const config& c) {
    client_options o = options_over(from_config<client_options>(c), c.ocr.base_url, {}, c.ocr.model);
    o.api_key = c.ocr.api_key;  // never the main key sent to another provider
    o.stream = false;
    return o;
}

} // namespace ania::openai
