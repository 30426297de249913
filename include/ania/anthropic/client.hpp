// ania/anthropic/client.hpp -- a chat_client for the Anthropic Messages API, over libcurl.
// SPDX-License-Identifier: MIT
//
//     ania::anthropic::client claude({.api_key = key, .model = "claude-sonnet-4-5"});
//
// The same chat_client as openai::client (both are http::model_client, over their protocols): an agent switches
// provider by changing its client slot. How ania's messages map to Messages blocks is in
// <ania/anthropic/wire.hpp>. Transport, retries (429, 5xx including 529 "overloaded"), timeouts, cancellation,
// thread safety and key handling are http::model_client's.
#pragma once

#include <chrono>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <ania/anthropic/wire.hpp>
#include <ania/concepts.hpp>
#include <ania/http/model_client.hpp>
#include <ania/http/retry.hpp>
#include <ania/json.hpp>
#include <ania/log.hpp>

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

/// The Messages protocol for http::model_client: POST .../messages, x-api-key and anthropic-version, the body
/// of wire.hpp (cache_control placement included), its answer parser and event-stream accumulator. A stream
/// that is not an event stream is not read as a plain answer (the Messages API always streams when asked).
struct protocol {
    using options = client_options;
    using body_options = anthropic::body_options;
    using stream_accumulator = anthropic::stream_accumulator;
    static constexpr std::string_view path = "/messages";
    static void headers(const options& o, std::vector<std::string>& out) {
        out.push_back("anthropic-version: " + o.version);
        if (!o.api_key.empty()) out.push_back("x-api-key: " + o.api_key);
    }
    [[nodiscard]] static body_options body(const options& o) {
        body_options b;
        b.model = o.model;
        b.max_tokens = o.max_tokens;
        b.stream = o.stream;
        b.cache_prompt = o.cache_prompt;
        b.extra = o.extra;
        return b;
    }
    [[nodiscard]] static std::string request_body(const chat_request& r, const body_options& b) { return anthropic::request_body(r, b); }
    [[nodiscard]] static wire_body request_wire(const chat_request& r, const body_options& b) { return anthropic::request_wire(r, b); }
    [[nodiscard]] static completion parse_answer(std::string_view body, const parse_limits& lim) { return anthropic::parse_answer(body, lim); }
    [[nodiscard]] static std::optional<completion> plain_in_stream(std::string_view, const parse_limits&) { return std::nullopt; }
};

/// A chat_client for the Anthropic Messages API: http::model_client over its protocol.
class client : public http::model_client<protocol> {
public:
    using model_client::model_client;
};

static_assert(chat_client<client>);

} // namespace ania::anthropic
