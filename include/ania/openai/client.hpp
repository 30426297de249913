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
#include <ania/http/call.hpp>
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


/// A chat_client over HTTP: non-streaming or SSE, retries, timeouts, cancellation (see the file comment).
class client {
public:
    explicit client(client_options opt) : opt_(std::move(opt)), pool_(std::make_shared<http::handle_pool>()) {
        url_ = http::endpoint(opt_.base_url, "/chat/completions");
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
        return http::with_retries(opt_.retry, request.stop, opt_.log, opt_.api_key,
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
        if (r.result != http::outcome::done) return {http::transfer_failure(r, opt_.max_answer_bytes), r.retry_after, true};
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
            completion c = http::transfer_failure(r, opt_.max_answer_bytes);
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
