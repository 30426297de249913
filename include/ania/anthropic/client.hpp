// ania/anthropic/client.hpp -- a chat_client for the Anthropic Messages API, over libcurl.
// SPDX-License-Identifier: MIT
//
//     ania::anthropic::client claude({.api_key = key, .model = "claude-sonnet-4-5"});
//
// The same chat_client as openai::client: an agent switches provider by changing its client slot. How ania's
// messages map to Messages blocks is in <ania/anthropic/wire.hpp>. Transport, retries (429, 5xx including
// 529 "overloaded"), timeouts, cancellation, thread safety and key handling are openai::client's.
#pragma once

#include <chrono>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <ania/anthropic/wire.hpp>
#include <ania/concepts.hpp>
#include <ania/http/call.hpp>
#include <ania/http/curl.hpp>
#include <ania/http/retry.hpp>
#include <ania/http/sse.hpp>
#include <ania/json.hpp>
#include <ania/log.hpp>
#include <ania/openai/wire.hpp>

namespace ania::anthropic {

struct client_options {
    std::string base_url{"https://api.anthropic.com/v1"};  ///< ".../messages" is appended
    std::string api_key{};                                 ///< sent as x-api-key
    std::string model{};
    std::string version{"2023-06-01"};                     ///< anthropic-version
    std::int64_t max_tokens = 4096;
    bool stream = false;
    bool cache_prompt = false;  ///< cache_control on the system prompt and the history prefix
    http::timeouts timeouts{};
    http::retry_options retry{};
    json extra = json::object();
    std::size_t max_answer_bytes = std::size_t(32) << 20;
    std::vector<std::string> headers{};  ///< e.g. "anthropic-beta: ..."
    log_sink log{};
    std::function<void(std::string_view)> on_text{};
};

class client {
public:
    explicit client(client_options opt) : opt_(std::move(opt)), pool_(std::make_shared<http::handle_pool>()) {
        url_ = http::endpoint(opt_.base_url, "/messages");
        headers_.push_back("Content-Type: application/json");
        headers_.push_back("anthropic-version: " + opt_.version);
        if (!opt_.api_key.empty()) headers_.push_back("x-api-key: " + opt_.api_key);
        if (opt_.stream) headers_.push_back("Accept: text/event-stream");
        for (const std::string& h : opt_.headers) headers_.push_back(h);
        body_.model = opt_.model;
        body_.max_tokens = opt_.max_tokens;
        body_.stream = opt_.stream;
        body_.cache_prompt = opt_.cache_prompt;
        body_.extra = opt_.extra;
    }

    [[nodiscard]] completion complete(const chat_request& request) {
        std::string body;
        try {
            body = request_body(request, body_);
        } catch (const std::exception& e) {
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
        if (r.status < 200 || r.status >= 300) return {openai::error_answer(static_cast<int>(r.status), r.body), r.retry_after, true};
        parse_limits lim;
        lim.max_bytes = opt_.max_answer_bytes;
        return {parse_answer(r.body, lim), std::nullopt, false};
    }

    attempt_result streamed(const std::string& body, const std::stop_token& stop) {
        parse_limits lim;
        lim.max_bytes = opt_.max_answer_bytes;
        stream_accumulator acc(lim);
        bool delivered = false;
        acc.on_text([&](std::string_view piece) {
            delivered = true;
            if (opt_.on_text) opt_.on_text(piece);
        });
        http::sse_decoder sse;
        http::request req = base_request(body, stop);
        req.on_data = [&](std::string_view bytes) {
            return sse.feed(bytes, [&](const http::sse_event& ev) { acc.add(ev.data); }) && !acc.failed();
        };
        const http::response r = http::post(*pool_, req);
        if (r.result == http::outcome::done && (r.status < 200 || r.status >= 300))
            return {openai::error_answer(static_cast<int>(r.status), r.body), r.retry_after, true};
        if (acc.failed()) return {std::move(acc).finish(), std::nullopt, false};
        if (r.result != http::outcome::done) return {http::transfer_failure(r, opt_.max_answer_bytes), r.retry_after, !delivered};
        sse.finish([&](const http::sse_event& ev) { acc.add(ev.data); });
        return {std::move(acc).finish(), std::nullopt, false};
    }

    client_options opt_;
    std::shared_ptr<http::handle_pool> pool_;
    std::string url_;
    std::vector<std::string> headers_;
    body_options body_;
};

static_assert(chat_client<client>);

} // namespace ania::anthropic
