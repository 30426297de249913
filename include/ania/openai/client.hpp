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
    o.extra = to_json(c.llm.extra);
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
