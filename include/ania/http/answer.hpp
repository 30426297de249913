// ania/http/answer.hpp -- what every model provider's answer has in common, whatever its protocol: the typed
// failure of an error body (HTTP status, the provider's {"error": {message, type, code}}, quota and context-length
// wording of OpenAI, DeepSeek, vLLM, Anthropic), a malformed answer, and the JSON parse that repairs invalid
// UTF-8. Pure functions; the OpenAI and Anthropic protocols both use them.
// SPDX-License-Identifier: MIT
#pragma once

#include <algorithm>
#include <cctype>
#include <string>
#include <string_view>
#include <utility>

#include <ania/completion.hpp>
#include <ania/json.hpp>
#include <ania/text/utf8.hpp>

namespace ania::http {

namespace detail {

[[nodiscard]] inline std::string lower(std::string_view s) {
    std::string out(s);
    for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    return out;
}

/// Providers word "the prompt does not fit" differently: OpenAI's code, DeepSeek's and vLLM's message,
/// Anthropic's "prompt is too long". Matched on the code first, then on the (lower-cased) message.
[[nodiscard]] inline bool says_context_length(std::string_view code, std::string_view message) {
    if (code == "context_length_exceeded" || code == "string_above_max_length" || code == "context_too_long") return true;
    const std::string m = lower(message.substr(0, 4096));
    for (const char* needle : {"context_length_exceeded", "maximum context length", "context length", "context window",
                               "prompt is too long", "too many tokens", "input is too long", "reduce the length"})
        if (m.find(needle) != std::string::npos) return true;
    return false;
}

[[nodiscard]] inline std::string string_member(const json& o, const char* key) {
    if (!o.is_object()) return {};
    const auto it = o.find(key);
    if (it == o.end()) return {};
    if (it->is_string()) return it->get<std::string>();
    if (it->is_number()) return it->dump();
    return {};
}

/// A JSON document from a body that may hold invalid UTF-8 (repaired: a provider's bad byte costs one
/// U+FFFD, not the answer). Throws ania::error (invalid_message) for anything that is not JSON.
[[nodiscard]] inline json parse_body(std::string_view body, const parse_limits& limits) {
    if (text::is_valid_utf8(body)) return parse_json(body, limits);
    const std::string fixed = text::repair_utf8(body);
    return parse_json(fixed, limits);
}

/// The account is out of credit, not over a rate: OpenAI's insufficient_quota (a 429 that waiting never
/// cures), its billing codes, Anthropic's billing_error and "credit balance is too low".
[[nodiscard]] inline bool says_quota(std::string_view type, std::string_view code, std::string_view message) {
    for (const std::string_view k : {"insufficient_quota", "billing_hard_limit_reached", "billing_not_active", "billing_error",
                                     "quota_exceeded", "insufficient_balance"})
        if (code == k || type == k) return true;
    const std::string m = lower(message.substr(0, 4096));
    return m.find("credit balance is too low") != std::string::npos || m.find("exceeded your current quota") != std::string::npos;
}

/// The HTTP status an error sent inside a 200 answer or stream stands for (an Anthropic `error` event, an
/// OpenRouter mid-stream error, a proxy's 200 with an `error` member), from its numeric code or its type.
/// An error the server does not explain is a server failure: it came from the server, not from a broken
/// protocol, and another attempt may succeed.
[[nodiscard]] inline int in_band_status(std::string_view type, std::string_view code) {
    if (code.size() == 3 && std::all_of(code.begin(), code.end(), [](char c) { return c >= '0' && c <= '9'; })) {
        const int n = (code[0] - '0') * 100 + (code[1] - '0') * 10 + (code[2] - '0');
        if (n >= 400 && n <= 599) return n;
    }
    for (const std::string_view t : {type, code}) {
        if (t == "rate_limit_error" || t == "rate_limit_exceeded" || t == "rate_limited") return 429;
        if (t == "authentication_error" || t == "permission_error" || t == "invalid_api_key") return 401;
        if (t == "invalid_request_error" || t == "not_found_error" || t == "request_too_large" || t == "bad_request") return 400;
        if (t == "overloaded_error") return 529;
    }
    return 500;
}

} // namespace detail

/// The typed failure and readable text of an error answer: the HTTP status and the provider's
/// `{"error":{"message","type","code"}}` when the body has one (else the start of the body). Status 2xx: an
/// error inside an answer or a stream, typed by what it says (see detail::in_band_status).
[[nodiscard]] inline completion error_answer(int status, std::string_view body, int attempts = 1) {
    call_failure f;
    f.http_status = status;
    f.attempts = attempts;
    std::string message;
    try {
        const json j = detail::parse_body(body.substr(0, std::size_t(1) << 20), parse_limits{});
        const json& e = j.is_object() && j.contains("error") ? j["error"] : j;
        if (e.is_string()) {
            message = e.get<std::string>();
        } else {
            message = detail::string_member(e, "message");
            f.type = detail::string_member(e, "type");
            f.code = detail::string_member(e, "code");
        }
    } catch (const std::exception&) {
        message = text::repair_utf8(text::truncate_runes(body, 300));
    }
    const int as = status >= 200 && status < 300 ? detail::in_band_status(f.type, f.code) : status;
    if (as == 429) f.kind = failure_kind::rate_limited;
    else if (as >= 500) f.kind = failure_kind::server;
    else if (as == 401 || as == 403) f.kind = failure_kind::auth;
    else if (as >= 400) f.kind = failure_kind::bad_request;
    else f.kind = failure_kind::malformed;
    if ((as == 400 || as == 413 || as == 422 || as == 0) && detail::says_context_length(f.code, message))
        f.kind = failure_kind::context_length_exceeded;
    f.retryable = as == 429 || as >= 500;
    if (as >= 400 && detail::says_quota(f.type, f.code, message)) {
        f.kind = failure_kind::quota_exceeded;
        f.retryable = false;
    }
    std::string why = "HTTP " + std::to_string(status);
    if (status >= 200 && status < 300) why += " (an error inside the answer)";
    if (!f.type.empty()) why += " " + f.type;
    if (!f.code.empty()) why += " (" + f.code + ")";
    if (!message.empty()) why += ": " + std::string(text::truncate_runes(message, 500));
    return completion::failure_of(std::move(why), std::move(f));
}

[[nodiscard]] inline call_failure malformed_failure(int status = 200) {
    call_failure f;
    f.kind = failure_kind::malformed;
    f.http_status = status;
    return f;
}

/// A malformed answer (not JSON, no choice, ...).
[[nodiscard]] inline completion malformed_answer(std::string why, int status = 200) {
    call_failure f;
    f.kind = failure_kind::malformed;
    f.http_status = status;
    return completion::failure_of("malformed answer: " + std::move(why), std::move(f));
}

} // namespace ania::http
