// ania/openai/wire.hpp -- the OpenAI chat-completions protocol as bytes: request bodies, answers, streamed
// chunks and error bodies. No network here (see <ania/openai/client.hpp>): everything is a pure function of
// its input, so the protocol is tested and fuzzed without a server.
// SPDX-License-Identifier: MIT
#pragma once

#include <algorithm>
#include <cctype>
#include <cstdint>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

#include <ania/concepts.hpp>
#include <ania/error.hpp>
#include <ania/http/answer.hpp>
#include <ania/http/sse.hpp>
#include <ania/json.hpp>
#include <ania/json_writer.hpp>
#include <ania/message.hpp>
#include <ania/openai/stream_chunk.hpp>
#include <ania/text/utf8.hpp>
#include <ania/wire_cache.hpp>

namespace ania::openai {

/// What goes into a request body besides the messages and tools.
struct body_options {
    std::string model;
    bool stream = false;
    bool include_usage = true;  ///< stream_options.include_usage: the final chunk reports usage
    /// Members added to every request as they are: temperature, max_tokens, tool_choice,
    /// parallel_tool_calls, a provider's own switches. An object; the members ania writes itself (model,
    /// messages, tools, stream, stream_options) cannot be overridden here.
    json extra = json::object();
    /// How messages are written: `include_reasoning` is the policy for replaying reasoning_content (DeepSeek
    /// rejects it in some modes, others need it back); `empty_tool_call_content` what a call-only message carries.
    write_options messages{};
};

namespace detail {

/// The members a client adds after the messages and tools: the stream switches and the extra members, then
/// the closing brace.
inline void append_body_members(std::string& out, const body_options& opt) {
    if (opt.stream) {
        out += R"(,"stream":true)";
        if (opt.include_usage) out += R"(,"stream_options":{"include_usage":true})";
    }
    if (opt.extra.is_object()) {
        for (auto it = opt.extra.begin(); it != opt.extra.end(); ++it) {
            const std::string& k = it.key();
            if (k == "model" || k == "messages" || k == "tools" || k == "stream" || k == "stream_options") continue;
            out.push_back(',');
            out += json(k).dump(-1, ' ', false, json::error_handler_t::replace);
            out.push_back(':');
            out += it.value().dump(-1, ' ', false, json::error_handler_t::replace);
        }
    }
    out.push_back('}');
}

/// The wire_cache key of messages written with `w`: another write option is another format.
[[nodiscard]] constexpr std::uint64_t wire_key(const write_options& w) noexcept {
    return 0x6f70656e61690000ULL | (std::uint64_t{w.include_reasoning} << 8) | static_cast<std::uint64_t>(w.empty_tool_call_content);
}

} // namespace detail

/// The request body: request_to_json (json_writer.hpp) plus stream switches and the extra members.
[[nodiscard]] inline std::string request_body(const chat_request& request, const body_options& opt) {
    std::string out = request_to_json(request, opt.model, opt.messages);
    out.pop_back();  // the closing brace: members follow
    detail::append_body_members(out, opt);
    return out;
}

/// request_body in pieces (the same bytes, wire_body::flatten): the history segment's messages come from
/// request.history_wire, written there once per message and then only referred to, so the request costs
/// the base prompt, this turn and the tools. Without a cache, the whole body is the head.
[[nodiscard]] inline wire_body request_wire(const chat_request& request, const body_options& opt) {
    wire_body b;
    if (request.history_wire == nullptr) {
        b.head = request_body(request, opt);
        return b;
    }
    const auto seg = request.messages.segments();
    const auto write = [&opt](std::string& out, const message& m) { append_json(out, m, opt.messages); };
    ania::detail::append_request_open(b.head, opt.model);
    for (const message& m : seg[0]) {
        write(b.head, m);
        b.head.push_back(',');
    }
    std::size_t uncached = 0;
    b.shared = request.history_wire->sync(detail::wire_key(opt.messages), seg[1], write, uncached);
    for (std::size_t i = 0; i < uncached; ++i) {  // a compaction's summaries: written each time, they are few
        write(b.head, seg[1][i]);
        b.head.push_back(',');
    }
    for (const message& m : seg[2]) {
        write(b.tail, m);
        b.tail.push_back(',');
    }
    // Every message was written with a comma after it: the last one becomes the closing bracket.
    if (!b.tail.empty()) {
        b.tail.back() = ']';
    } else if (!b.shared.empty()) {
        b.shared.remove_suffix(1);
        b.tail.push_back(']');
    } else if (b.head.back() == ',') {
        b.head.back() = ']';
    } else {
        b.head.push_back(']');
    }
    ania::detail::append_request_tools(b.tail, request.tools);
    detail::append_body_members(b.tail, opt);
    return b;
}

namespace detail {

/// Where providers put the usage: the top level (OpenAI; the last chunk with include_usage), the choice
/// (Moonshot/Kimi's final chunk: choices[0].usage), Groq's x_groq.usage. The top level wins over the choice,
/// the choice over x_groq; among equals the later one (a stream's running count ends with the total).
struct usage_pick {
    ania::usage used;
    int rank = 0;

    void offer(const json& j, json::const_iterator choices) {
        if (const auto u = j.find("usage"); u != j.end() && u->is_object()) take(*u, 3);
        if (rank <= 2 && choices != j.end() && choices->is_array() && !choices->empty() && (*choices)[0].is_object())
            if (const auto u = (*choices)[0].find("usage"); u != (*choices)[0].end() && u->is_object()) take(*u, 2);
        if (rank <= 1)
            if (const auto g = j.find("x_groq"); g != j.end() && g->is_object())
                if (const auto u = g->find("usage"); u != g->end() && u->is_object()) take(*u, 1);
    }

private:
    void take(const json& u, int r) {
        if (r < rank) return;
        try {
            used = usage_from_json(u);
            rank = r;
        } catch (const std::exception&) {  // a usage we cannot read is no usage, not a lost answer
        }
    }
};

/// finish_reason "error" (OpenRouter's mid-stream failure, sometimes without an `error` member): the
/// provider gave up on the answer, a server failure another attempt may cure.
[[nodiscard]] inline completion finished_with_error(const ania::usage& used) {
    call_failure f;
    f.kind = failure_kind::server;
    f.http_status = 200;
    f.retryable = true;
    return completion::failure_of("HTTP 200 (an error inside the answer): the provider ended the answer with finish_reason \"error\"",
                                  std::move(f), used);
}

} // namespace detail

// The answer pieces every provider shares (error bodies, malformed answers, the repaired JSON parse) are in
// <ania/http/answer.hpp>; named here too, as the OpenAI protocol's.
using http::error_answer;
using http::malformed_answer;
using http::malformed_failure;

/// A non-streaming answer (HTTP 200 body). An `error` member in a 200 body (some proxies do that) is a failure.
[[nodiscard]] inline completion parse_answer(std::string_view body, const parse_limits& limits = {}) {
    json j;
    try {
        j = http::detail::parse_body(body, limits);
    } catch (const std::exception& e) {
        return malformed_answer(e.what());
    }
    if (!j.is_object()) return malformed_answer("not a JSON object");
    if (j.contains("error") && !j["error"].is_null()) return error_answer(200, body);
    const auto ch = j.find("choices");
    detail::usage_pick pick;
    pick.offer(j, ch);
    const ania::usage used = pick.used;
    if (ch == j.end() || !ch->is_array() || ch->empty() || !(*ch)[0].is_object())
        return completion::failure_of("malformed answer: no choice", malformed_failure(), used);
    const json& choice = (*ch)[0];
    const auto m = choice.find("message");
    if (m == choice.end() || !m->is_object())
        return completion::failure_of("malformed answer: the choice has no message", malformed_failure(), used);
    completion c;
    try {
        c = completion::success(message_from_json(*m, limits), used);
    } catch (const std::exception& e) {
        return completion::failure_of(std::string("malformed answer: ") + e.what(), malformed_failure(), used);
    }
    c.reply.role = role::assistant;
    c.finish_reason = http::detail::string_member(choice, "finish_reason");
    if (c.finish_reason == "error") return detail::finished_with_error(used);
    return c;
}

/// Accumulates a streamed answer chunk by chunk: content and reasoning_content appended, tool calls
/// assembled by `index` (id, type and name arrive once, arguments in pieces), finish_reason kept, usage from
/// the chunk that has it (with include_usage: the last one, whose `choices` is empty). Linear in the bytes.
class stream_accumulator {
public:
    explicit stream_accumulator(parse_limits limits = {}) : limits_(limits) {}

    /// One event's data. "[DONE]" ends the stream. Returns false once the stream has failed (an error chunk,
    /// a chunk that is not JSON): `finish()` then reports why.
    bool add(std::string_view data) {
        if (failed_) return false;
        if (http::is_keep_alive(data)) return true;
        if (data == "[DONE]") {
            done_ = true;
            return true;
        }
        if (detail::stream_chunk_reader::fields f; fast_.read(data, limits_, f)) {  // the common chunk, no document built
            if (f.saw_choice) {
                saw_choice_ = true;
                if (f.finish_reason) finish_.assign(*f.finish_reason);
                if (f.content) {
                    content_ += *f.content;
                    has_content_ = true;
                    if (on_text_) on_text_(*f.content);
                }
                if (f.reasoning) {
                    reasoning_ += *f.reasoning;
                    has_reasoning_ = true;
                }
            }
            return true;
        }
        json j;
        try {
            j = http::detail::parse_body(data, limits_);
        } catch (const std::exception& e) {
            return fail(malformed_answer(std::string("a stream chunk: ") + e.what()));
        }
        if (!j.is_object()) return fail(malformed_answer("a stream chunk is not a JSON object"));
        if (const auto e = j.find("error"); e != j.end() && !e->is_null()) return fail(error_answer(200, data));
        const auto ch = j.find("choices");
        usage_.offer(j, ch);
        if (ch == j.end() || !ch->is_array()) return true;
        for (const json& choice : *ch) {
            if (!choice.is_object()) continue;
            if (const auto idx = choice.find("index"); idx != choice.end() && idx->is_number_integer() && idx->get<std::int64_t>() != 0)
                continue;  // n > 1: ania asks for one choice and keeps the first
            saw_choice_ = true;
            if (const auto fr = choice.find("finish_reason"); fr != choice.end() && fr->is_string()) {
                finish_ = fr->get<std::string>();
                if (finish_ == "error") return fail(detail::finished_with_error(usage_.used));
            }
            const auto d = choice.find("delta");
            if (d == choice.end() || !d->is_object()) continue;
            if (const auto c = d->find("content"); c != d->end() && c->is_string()) {
                const std::string& piece = c->get_ref<const std::string&>();
                content_ += piece;
                has_content_ = true;
                if (on_text_) on_text_(piece);
            }
            if (const auto r = d->find("reasoning_content"); r != d->end() && r->is_string()) {
                reasoning_ += r->get_ref<const std::string&>();
                has_reasoning_ = true;
            }
            if (const auto tc = d->find("tool_calls"); tc != d->end() && tc->is_array())
                for (const json& call : *tc) add_call(call);
        }
        return true;
    }

    /// Called with each piece of content text as it arrives.
    void on_text(std::function<void(std::string_view)> f) { on_text_ = std::move(f); }

    [[nodiscard]] bool done() const noexcept { return done_; }
    [[nodiscard]] bool failed() const noexcept { return failed_; }
    [[nodiscard]] const ania::usage& usage() const noexcept { return usage_.used; }

    /// The answer. A stream that ended without [DONE] still yields what arrived if it has a choice (some
    /// servers close without it); without any choice it is malformed.
    [[nodiscard]] completion finish() && {
        if (failed_) {
            failure_.used = usage_.used;
            return std::move(failure_);
        }
        if (!saw_choice_) return completion::failure_of("malformed answer: the stream had no choice", malformed_failure(), usage_.used);
        message m;
        m.role = role::assistant;
        if (has_content_ || calls_.empty()) m.content = std::move(content_);
        if (!has_content_ && !calls_.empty()) m.form = content_form::null;
        if (has_reasoning_) m.reasoning_content = std::move(reasoning_);
        m.tool_calls = std::move(calls_);
        completion c = completion::success(std::move(m), usage_.used);
        c.finish_reason = std::move(finish_);
        return c;
    }

private:
    bool fail(completion c) {
        failed_ = true;
        failure_ = std::move(c);
        return false;
    }

    std::size_t new_call(std::int64_t index) {
        const std::size_t at = calls_.size();
        calls_.emplace_back();
        positions_.insert_or_assign(index, at);
        return at;
    }

    void add_call(const json& call) {
        if (!call.is_object()) return;
        std::int64_t index = static_cast<std::int64_t>(calls_.size());  // no index: a new call (some servers omit it)
        if (const auto i = call.find("index"); i != call.end() && i->is_number_integer()) index = i->get<std::int64_t>();
        std::string_view id;
        if (const auto i = call.find("id"); i != call.end() && i->is_string()) id = i->get_ref<const std::string&>();
        std::size_t at;
        if (index == last_index_ && !calls_.empty()) {
            at = last_pos_;  // the common case: the pieces of one call in a row
        } else if (const auto f = positions_.find(index); f != positions_.end()) {
            at = f->second;
        } else {
            at = new_call(index);
        }
        // Another id at an index in use is another call: Ollama, LiteLLM and Gemini proxies send every
        // parallel call with index 0, told apart only by id. Pieces without an id go to the newest call there.
        if (!id.empty() && !calls_[at].id.empty() && calls_[at].id != id) at = new_call(index);
        last_index_ = index;
        last_pos_ = at;
        tool_call& t = calls_[at];
        if (!id.empty() && t.id.empty()) t.id = id;
        if (const auto ty = call.find("type"); ty != call.end() && ty->is_string()) t.type = ty->get<std::string>();
        if (const auto fn = call.find("function"); fn != call.end() && fn->is_object()) {
            if (const auto n = fn->find("name"); n != fn->end() && n->is_string()) {
                if (t.name.empty()) t.name = n->get<std::string>();
                else if (t.name != n->get_ref<const std::string&>()) t.name += n->get_ref<const std::string&>();  // names in pieces (rare)
            }
            if (const auto a = fn->find("arguments"); a != fn->end() && a->is_string()) t.arguments += a->get_ref<const std::string&>();
        }
    }

    parse_limits limits_;
    detail::stream_chunk_reader fast_;
    std::string content_, reasoning_, finish_;
    std::vector<tool_call> calls_;
    std::unordered_map<std::int64_t, std::size_t> positions_;
    std::int64_t last_index_ = -1;
    std::size_t last_pos_ = 0;
    detail::usage_pick usage_;
    completion failure_;
    std::function<void(std::string_view)> on_text_;
    bool has_content_ = false, has_reasoning_ = false, saw_choice_ = false, done_ = false, failed_ = false;
};

} // namespace ania::openai
