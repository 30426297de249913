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
        call_.url = http::endpoint(opt_.base_url, "/messages");
        call_.headers.push_back("Content-Type: application/json");
        call_.headers.push_back("anthropic-version: " + opt_.version);
        if (!opt_.api_key.empty()) call_.headers.push_back("x-api-key: " + opt_.api_key);
        if (opt_.stream) call_.headers.push_back("Accept: text/event-stream");
        for (const std::string& h : opt_.headers) call_.headers.push_back(h);
        call_.limits = opt_.timeouts;
        call_.max_answer_bytes = opt_.max_answer_bytes;
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
        const auto error_of = [](int status, std::string_view b) { return openai::error_answer(status, b); };
        return http::with_retries(opt_.retry, request.stop, opt_.log, opt_.api_key, [&] {
            if (!opt_.stream)
                return call_.plain(*pool_, body, request.stop, error_of,
                                   [](std::string_view b, const parse_limits& lim) { return parse_answer(b, lim); });
            stream_accumulator acc(call_.answer_limits());
            return call_.streamed(*pool_, body, request.stop, acc, opt_.on_text, error_of,
                                  [](std::string_view, const parse_limits&) { return std::optional<completion>(); });
        });
    }

    [[nodiscard]] const client_options& options() const noexcept { return opt_; }

private:
    client_options opt_;
    std::shared_ptr<http::handle_pool> pool_;
    http::endpoint_call call_;
    body_options body_;
};

static_assert(chat_client<client>);

} // namespace ania::anthropic
