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
#include <ania/http/call.hpp>
#include <ania/http/curl.hpp>
#include <ania/http/retry.hpp>
#include <ania/http/sse.hpp>
#include <ania/json.hpp>
#include <ania/log.hpp>
#include <ania/openai/wire.hpp>

namespace ania::openai {

/// How a client reaches its model. `from_config<client_options>(cfg)` (<ania/config/clients.hpp>) fills it from `llm.*`.
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
        call_.url = http::endpoint(opt_.base_url, "/chat/completions");
        call_.headers.push_back("Content-Type: application/json");
        if (!opt_.api_key.empty()) call_.headers.push_back("Authorization: Bearer " + opt_.api_key);
        if (opt_.stream) call_.headers.push_back("Accept: text/event-stream");
        for (const std::string& h : opt_.headers) call_.headers.push_back(h);
        call_.limits = opt_.timeouts;
        call_.max_answer_bytes = opt_.max_answer_bytes;
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
        const auto error_of = [](int status, std::string_view b) { return error_answer(status, b); };
        const auto parse = [](std::string_view b, const parse_limits& lim) { return parse_answer(b, lim); };
        return http::with_retries(opt_.retry, request.stop, opt_.log, opt_.api_key, [&] {
            if (!opt_.stream) return call_.plain(*pool_, body, request.stop, error_of, parse);
            stream_accumulator acc(call_.answer_limits());
            // A server that ignores stream:true answers with plain JSON: read it as such.
            return call_.streamed(*pool_, body, request.stop, acc, opt_.on_text, error_of,
                                  [&](std::string_view head, const parse_limits& lim) { return std::optional<completion>(parse(head, lim)); });
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

} // namespace ania::openai
