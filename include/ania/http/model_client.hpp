// ania/http/model_client.hpp -- the one HTTP model client: http::model_client<Protocol> is a chat_client over
// libcurl for any provider whose protocol is written as a `model_protocol` (the endpoint's path, its auth
// headers, the request body, the answer parser, the stream accumulator). openai::client and anthropic::client
// are this client over their protocols; a provider of your own is a protocol struct, not a client.
//
// What every provider gets from it: plain or SSE answers (a server that ignores `stream` and answers JSON is
// read as such when the protocol can), retries on 429 / 5xx / network errors with back-off (never once text
// reached `on_text`), connect / total / stall timeouts, cancellation by the request's stop token, the key
// removed from every error text and log line. Thread safety: one client may be used from any number of
// threads at once (and copies share its connections): every call takes its own curl handle from a shared
// pool, so calls never wait on each other, and a handle goes back to the pool with its connection kept alive.
// Needs libcurl: `dependency('ania-openai')`.
// SPDX-License-Identifier: MIT
#pragma once

#include <concepts>
#include <exception>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <ania/chat_request.hpp>
#include <ania/completion.hpp>
#include <ania/http/answer.hpp>
#include <ania/http/call.hpp>
#include <ania/http/curl.hpp>
#include <ania/http/retry.hpp>
#include <ania/json_fwd.hpp>
#include <ania/wire_cache.hpp>

namespace ania::http {

/// How one provider's chat endpoint is spoken. `options` has at least base_url, api_key, stream, timeouts,
/// retry, max_answer_bytes, headers, log and on_text (what the transport reads); the rest is the protocol's.
template <class P>
concept model_protocol = requires(const typename P::options& o, const chat_request& request, const typename P::body_options& b,
                                  std::string_view text, const parse_limits& limits, std::vector<std::string>& headers) {
    { P::path } -> std::convertible_to<std::string_view>;                       // appended to base_url
    P::headers(o, headers);                                                     // auth, version: before the user's
    { P::body(o) } -> std::same_as<typename P::body_options>;                   // what every request body repeats
    { P::request_body(request, b) } -> std::same_as<std::string>;
    { P::parse_answer(text, limits) } -> std::same_as<completion>;              // a plain (non-streamed) answer
    { P::plain_in_stream(text, limits) } -> std::same_as<std::optional<completion>>;  // JSON where SSE was asked
    typename P::stream_accumulator;                                             // SSE events in, a completion out
};

template <model_protocol Protocol>
class model_client {
public:
    using protocol = Protocol;
    using options_type = typename Protocol::options;

    explicit model_client(options_type opt) : opt_(std::move(opt)), pool_(std::make_shared<handle_pool>()) {
        call_.url = endpoint(opt_.base_url, Protocol::path);
        call_.headers.push_back("Content-Type: application/json");
        Protocol::headers(opt_, call_.headers);
        if (opt_.stream) call_.headers.push_back("Accept: text/event-stream");
        for (const std::string& h : opt_.headers) call_.headers.push_back(h);
        call_.limits = opt_.timeouts;
        call_.max_answer_bytes = opt_.max_answer_bytes;
        body_ = Protocol::body(opt_);
    }

    [[nodiscard]] completion complete(const chat_request& request) {
        wire_body body;
        try {
            // A protocol that writes the history message by message sends the window's cached bytes as they
            // are (chat_request::history_wire): the request costs the turn, not the history.
            if constexpr (requires { { Protocol::request_wire(request, body_) } -> std::same_as<wire_body>; })
                body = Protocol::request_wire(request, body_);
            else
                body.head = Protocol::request_body(request, body_);
        } catch (const std::exception& e) {  // e.g. a tool definition that cannot be written
            return completion::failure_of(std::string("the request could not be written: ") + e.what(), {});
        }
        const auto error_of = [](int status, std::string_view b) { return error_answer(status, b); };
        return with_retries(opt_.retry, request.stop, opt_.log, opt_.api_key, [&] {
            if (!opt_.stream) return call_.plain(*pool_, body, request.stop, error_of, &Protocol::parse_answer);
            typename Protocol::stream_accumulator acc(call_.answer_limits());
            return call_.streamed(*pool_, body, request.stop, acc, opt_.on_text, error_of, &Protocol::plain_in_stream);
        });
    }

    [[nodiscard]] const options_type& options() const noexcept { return opt_; }

private:
    options_type opt_;
    std::shared_ptr<handle_pool> pool_;
    endpoint_call call_;
    typename Protocol::body_options body_;
};

} // namespace ania::http
