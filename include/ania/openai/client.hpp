// ania/openai/client.hpp -- a chat_client for any OpenAI-compatible chat-completions endpoint, over libcurl.
// SPDX-License-Identifier: MIT
//
//     ania::openai::client llm({.base_url = "https://api.deepseek.com", .api_key = key, .model = "deepseek-chat"});
//     ania::completion c = llm.complete({messages, tools, stop});
//
// Needs libcurl: `dependency('ania-openai')`. The transport (retries, timeouts, cancellation, thread safety,
// the key kept out of every error and log line) is http::model_client's (<ania/http/model_client.hpp>); this
// file is the protocol: the options, the Bearer header, wire.hpp's body and parsers.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <ania/concepts.hpp>
#include <ania/http/model_client.hpp>
#include <ania/http/retry.hpp>
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


/// The OpenAI chat-completions protocol for http::model_client: POST .../chat/completions, Bearer auth, the
/// body of request_body, answers and chunks as wire.hpp reads them (a server that ignores stream:true and
/// answers with plain JSON is read as such).
struct protocol {
    using options = client_options;
    using body_options = openai::body_options;
    using stream_accumulator = openai::stream_accumulator;
    static constexpr std::string_view path = "/chat/completions";
    static void headers(const options& o, std::vector<std::string>& out) {
        if (!o.api_key.empty()) out.push_back("Authorization: Bearer " + o.api_key);
    }
    [[nodiscard]] static body_options body(const options& o) {
        body_options b;
        b.model = o.model;
        b.stream = o.stream;
        b.extra = o.extra;
        b.messages = o.messages;
        return b;
    }
    [[nodiscard]] static std::string request_body(const chat_request& r, const body_options& b) { return openai::request_body(r, b); }
    [[nodiscard]] static wire_body request_wire(const chat_request& r, const body_options& b) { return openai::request_wire(r, b); }
    [[nodiscard]] static completion parse_answer(std::string_view body, const parse_limits& lim) { return openai::parse_answer(body, lim); }
    [[nodiscard]] static std::optional<completion> plain_in_stream(std::string_view head, const parse_limits& lim) {
        return openai::parse_answer(head, lim);
    }
};

/// A chat_client for any OpenAI-compatible endpoint: http::model_client over the OpenAI protocol (see the
/// file comment). A class, not an alias, so that it can be declared ahead (<ania/fwd.hpp>).
class client : public http::model_client<protocol> {
public:
    using model_client::model_client;
};

static_assert(chat_client<client>);

} // namespace ania::openai
