// ania/anthropic/wire.hpp -- the Anthropic Messages protocol as bytes: ania's (OpenAI-shaped) messages mapped to
// a Messages request, an answer or a stream of events mapped back to a completion. Pure functions, no network.
// SPDX-License-Identifier: MIT
//
// The mapping: system and developer messages become the top-level `system` (joined by a blank line); an
// assistant's tool calls become `tool_use` blocks (arguments parsed to `input`; arguments that are not a JSON
// object become {}); tool results become `tool_result` blocks, those of one round grouped into one user
// message; consecutive messages of one role are merged (the API wants user and assistant to alternate);
// images become image blocks (data URIs as base64 sources, URLs as url sources). Usage: prompt tokens =
// input + cache read + cache creation, cached = cache read. stop_reason is mapped to OpenAI's finish_reason
// (end_turn/stop_sequence -> stop, tool_use -> tool_calls, max_tokens -> length).
#pragma once

#include <algorithm>
#include <cstdint>
#include <functional>
#include <stdexcept>
#include <span>
#include <string>
#include <unordered_map>
#include <string_view>
#include <utility>
#include <vector>

#include <ania/concepts.hpp>
#include <ania/http/sse.hpp>
#include <ania/json.hpp>
#include <ania/message.hpp>
#include <ania/http/answer.hpp>
#include <ania/text/utf8.hpp>
#include <ania/tool.hpp>
#include <ania/wire_cache.hpp>

namespace ania::anthropic {

struct body_options {
    std::string model;
    std::int64_t max_tokens = 4096;  ///< required by the API
    bool stream = false;
    /// Prompt caching: cache_control on the system prompt and on the last block of the history (the request's
    /// second segment), so a long conversation is read from the cache on the next turn.
    bool cache_prompt = false;
    json extra = json::object();     ///< temperature, tool_choice, thinking, ...: added as they are
};

namespace detail {

[[nodiscard]] inline json image_block(const content_part& p) {
    const std::string& url = p.url;
    if (url.rfind("data:", 0) == 0) {
        const std::size_t semi = url.find(';'), comma = url.find(',');
        if (semi != std::string::npos && comma != std::string::npos && semi < comma)
            return {{"type", "image"},
                    {"source", {{"type", "base64"}, {"media_type", url.substr(5, semi - 5)}, {"data", url.substr(comma + 1)}}}};
    }
    return {{"type", "image"}, {"source", {{"type", "url"}, {"url", url}}}};
}

[[nodiscard]] inline json text_block(std::string t) { return {{"type", "text"}, {"text", std::move(t)}}; }

/// The content blocks of one ania message (not system / developer).
inline void blocks_of(const message& m, json& out) {
    if (m.role == role::tool) {
        out.push_back({{"type", "tool_result"}, {"tool_use_id", m.tool_call_id.value_or("")}, {"content", m.text()}});
        return;
    }
    if (m.form == content_form::parts) {
        for (const content_part& p : m.parts) {
            if (p.type == content_part::kind::text) {
                if (!p.text.empty()) out.push_back(text_block(p.text));
            } else if (p.type == content_part::kind::image_url) {
                out.push_back(image_block(p));
            }
        }
    } else if (!m.content.empty()) {
        out.push_back(text_block(m.content));
    }
    for (const tool_call& c : m.tool_calls) {
        json input = json::object();
        try {
            json a = parse_json(c.arguments);
            if (a.is_object()) input = std::move(a);
        } catch (const std::exception&) {  // arguments that are not JSON: the call is kept, with no input
        }
        out.push_back({{"type", "tool_use"}, {"id", c.id}, {"name", c.name}, {"input", std::move(input)}});
    }
}

[[nodiscard]] inline const char* wire_role(role r) noexcept { return r == role::assistant ? "assistant" : "user"; }

[[nodiscard]] inline std::string finish_reason(std::string_view stop) {
    if (stop == "end_turn" || stop == "stop_sequence") return "stop";
    if (stop == "tool_use") return "tool_calls";
    if (stop == "max_tokens") return "length";
    return std::string(stop);
}

[[nodiscard]] inline std::int64_t count_of(const json& u, const char* key) {
    const auto it = u.find(key);
    return it != u.end() && it->is_number_integer() && it->get<std::int64_t>() >= 0 ? it->get<std::int64_t>() : 0;
}

/// Usage from `usage` objects (message_start's and message_delta's add up).
struct usage_sum {
    std::int64_t input = 0, output = 0, cache_read = 0, cache_creation = 0;
    bool any = false;
    void add(const json& u) {
        if (!u.is_object()) return;
        any = true;
        input = std::max(input, count_of(u, "input_tokens"));
        output = std::max(output, count_of(u, "output_tokens"));  // message_delta repeats the running total
        cache_read = std::max(cache_read, count_of(u, "cache_read_input_tokens"));
        cache_creation = std::max(cache_creation, count_of(u, "cache_creation_input_tokens"));
    }
    [[nodiscard]] ania::usage get() const {
        ania::usage r;
        if (!any) return r;
        r.prompt_tokens = input + cache_read + cache_creation;
        r.completion_tokens = output;
        r.total_tokens = *r.prompt_tokens + output;
        r.cached_prompt_tokens = cache_read;
        return r;
    }
};

/// The tools as the Messages API declares them.
[[nodiscard]] inline json tools_json(std::span<const tool> ts) {
    json tools = json::array();
    for (const tool& t : ts) {
        const json d = t.definition();
        const json& f = d.contains("function") ? d["function"] : d;
        std::string name = http::detail::string_member(f, "name");
        tools.push_back({{"name", name.empty() ? t.name : std::move(name)},
                         {"description", http::detail::string_member(f, "description")},
                         {"input_schema", f.contains("parameters") ? f["parameters"] : json{{"type", "object"}}}});
    }
    return tools;
}

} // namespace detail

namespace detail {

/// The content blocks of one message as JSON text, comma-separated (what dump writes
/// for each of them); nothing for a system or developer message (its text goes to `system`).
inline void append_blocks(std::string& out, const message& m) {
    if (m.role == role::system || m.role == role::developer) return;
    json blocks = json::array();
    blocks_of(m, blocks);
    bool first = true;
    for (const json& b : blocks) {
        if (!first) out.push_back(',');
        first = false;
        out += b.dump(-1, ' ', false, json::error_handler_t::replace);
    }
}

inline constexpr std::string_view messages_placeholder = "\x01" "ania-messages" "\x01";  // (\x01a would be one hex escape)
inline constexpr std::string_view messages_placeholder_dumped = R"(,"messages":"\u0001ania-messages\u0001")";

/// The key of the history's run in a wire_cache (version 2: one run, groups and breakpoints included), with
/// what decides its bytes besides the messages: the stable head's end and whether breakpoints are placed.
[[nodiscard]] inline std::uint64_t run_key(const chat_request& request, const body_options& opt) noexcept {
    return 0x616e746872000002ULL ^ (static_cast<std::uint64_t>(request.stable_prefix) << 1 | (opt.cache_prompt ? 1U : 0U));
}

/// The `messages` array written message by message: consecutive messages of one wire role are one group (a
/// group without a block gets a " " text block), system and developer text goes to `system`, and a
/// breakpoint (cache_control) goes on the last block written so far. This is that writer's state; it fits a
/// wire_cache run's flags, so the history segment is written once and continued turn after turn.
struct group_writer {
    std::uint8_t group = 0;        // the open group: 0 none, 1 user, 2 assistant
    bool has_block = false;        // the open group has a block
    bool marked = false;           // the last block written carries cache_control
    bool after_lifted = false;     // the last message went to `system` (no breakpoint follows it)
    bool system_nonempty = false;  // `system` has text (the next lifted text is joined with a blank line)

    [[nodiscard]] std::uint64_t flags() const noexcept {
        return group | (has_block ? 4U : 0U) | (marked ? 8U : 0U) | (after_lifted ? 16U : 0U) | (system_nonempty ? 32U : 0U);
    }
    [[nodiscard]] static group_writer from(std::uint64_t f) noexcept {
        return {static_cast<std::uint8_t>(f & 3U), (f & 4U) != 0, (f & 8U) != 0, (f & 16U) != 0, (f & 32U) != 0};
    }
    /// A breakpoint on the last block written, which ends `out`, if the open group has one not yet marked.
    void mark(std::string& out) {
        if (!has_block || marked) return;
        out.pop_back();  // the block's closing brace
        out += R"(,"cache_control":{"type":"ephemeral"}})";
        marked = true;
    }
    void close(std::string& out) const {
        if (!group) return;
        if (!has_block) out += R"({"type":"text","text":" "})";
        out += "]}";
    }
    /// One message; `blocks()` gives its blocks' JSON (append_blocks), asked only when it is not lifted.
    template <class Blocks>
    void add(std::string& out, std::string& system, const message& m, Blocks&& blocks) {
        if (m.role == role::system || m.role == role::developer) {
            if (system_nonempty) system += "\n\n";
            const std::string t = m.text();
            system += t;
            system_nonempty = system_nonempty || !t.empty();
            after_lifted = true;
            return;
        }
        after_lifted = false;
        const std::uint8_t r = m.role == role::assistant ? 2 : 1;
        if (group != r) {
            close(out);
            if (group) out.push_back(',');
            out += R"({"role":")";
            out += wire_role(m.role);
            out += R"(","content":[)";
            group = r;
            has_block = false;
        }
        if (const std::string_view b = blocks(); !b.empty()) {
            if (has_block) out.push_back(',');
            out += b;
            has_block = true;
            marked = false;
        }
    }
    /// The breakpoint at the end of the history's stable head: before history message `i`, when the one
    /// before it was not lifted.
    void mark_stable_head(std::string& out, std::size_t i, const chat_request& request, const body_options& opt) {
        if (opt.cache_prompt && i > 0 && i == request.stable_prefix && !after_lifted) mark(out);
    }
};

/// The `messages` array as request_body's DOM would dump it, from each message's blocks (`blocks(s, i)`):
/// consecutive messages of one wire role grouped, a group without a block given a " " text block, and the
/// cache_control breakpoints (the stable head's end, the history's last block).
template <class Blocks>
void append_messages(std::string& out, std::string& system, const chat_request& request, const body_options& opt, Blocks&& blocks) {
    const auto segs = request.messages.segments();
    group_writer g;
    out.push_back('[');
    for (std::size_t s = 0; s < segs.size(); ++s) {
        for (std::size_t i = 0; i < segs[s].size(); ++i) {
            const message& m = segs[s][i];
            if (s == 1) g.mark_stable_head(out, i, request, opt);
            g.add(out, system, m, [&] { return blocks(s, i, m); });
        }
        if (s == 1 && opt.cache_prompt) g.mark(out);  // the history's last block
    }
    g.close(out);
    out.push_back(']');
}

/// request_body's top level (member order, the extra members, one of which may replace max_tokens in
/// place) around `messages`: `head` ends with `"messages":`, `tail` is what follows the array. Dumped with a
/// placeholder where the messages go, split at its first occurrence. Nothing before `messages` can hold it
/// unescaped: model, max_tokens and system are strings or numbers whose quotes dump escapes.
[[nodiscard]] inline wire_body body_frame(const chat_request& request, const body_options& opt, const std::string& system) {
    json body = json::object();
    body["model"] = opt.model;
    body["max_tokens"] = opt.max_tokens;
    if (!system.empty()) {
        if (opt.cache_prompt) body["system"] = json::array({{{"type", "text"}, {"text", system}, {"cache_control", {{"type", "ephemeral"}}}}});
        else body["system"] = system;
    }
    body["messages"] = std::string(messages_placeholder);
    if (!request.tools.empty()) body["tools"] = tools_json(request.tools);
    if (opt.stream) body["stream"] = true;
    if (opt.extra.is_object())
        for (auto it = opt.extra.begin(); it != opt.extra.end(); ++it)
            if (it.key() != "model" && it.key() != "messages" && it.key() != "system" && it.key() != "stream" && it.key() != "tools")
                body[it.key()] = it.value();
    wire_body b;
    b.tail = body.dump(-1, ' ', false, json::error_handler_t::replace);
    const std::size_t at = b.tail.find(messages_placeholder_dumped);
    if (at == std::string::npos) throw std::logic_error("anthropic: the messages placeholder is missing from the body");
    b.head.append(b.tail, 0, at).append(R"(,"messages":)");
    b.tail.erase(0, at + messages_placeholder_dumped.size());
    return b;
}

} // namespace detail

/// The Messages request body: system and developer messages joined into `system`, consecutive messages of
/// one role grouped, a group without a block given a " " text block, cache_control (with
/// body_options::cache_prompt) on the system prompt, at the end of the history's stable head and on its
/// last block.
[[nodiscard]] inline std::string request_body(const chat_request& request, const body_options& opt) {
    std::string system, messages, scratch;
    std::size_t bytes = 0;
    for (const auto& seg : request.messages.segments())
        for (const message& m : seg) bytes += m.content.size() + 40;
    messages.reserve(bytes);
    detail::append_messages(messages, system, request, opt, [&](std::size_t, std::size_t, const message& m) -> std::string_view {
        scratch.clear();
        detail::append_blocks(scratch, m);
        return scratch;
    });
    wire_body b = detail::body_frame(request, opt, system);
    std::string out;
    out.reserve(b.head.size() + messages.size() + b.tail.size());
    out.append(b.head).append(messages).append(b.tail);
    return out;
}

/// request_body's bytes in O(turn): the history segment (with the request's first segment before it) is one
/// run in request.history_wire, written once per message as the grouping writes it and then only referred to
/// (`shared`); a request writes its first segment (to check the run still starts from it), this turn, the
/// history's last breakpoint and the top level. A change of the window other than an append, of
/// stable_prefix or of cache_prompt writes the run again (O(history), once). Without a cache, request_body.
[[nodiscard]] inline wire_body request_wire(const chat_request& request, const body_options& opt) {
    if (request.history_wire == nullptr) {
        wire_body b;
        b.head = request_body(request, opt);
        return b;
    }
    const auto segs = request.messages.segments();
    std::string scratch;
    const auto blocks_of_message = [&](const message& m) {
        return [&scratch, &m]() -> std::string_view {
            scratch.clear();
            detail::append_blocks(scratch, m);
            return scratch;
        };
    };
    // The first segment (the base prompt: a few messages) is written per request: it is the run's prologue.
    std::string prologue;
    wire_cache::run_state start;
    {
        detail::group_writer g;
        for (const message& m : segs[0]) g.add(prologue, start.side, m, blocks_of_message(m));
        start.flags = g.flags();
    }
    const wire_cache::run_state* end = nullptr;
    const std::string_view run = request.history_wire->sync_run(
        detail::run_key(request, opt), prologue, start, segs[1],
        [&](std::string& out, std::size_t i, const message& m, wire_cache::run_state& st) {
            detail::group_writer g = detail::group_writer::from(st.flags);
            g.mark_stable_head(out, i, request, opt);
            g.add(out, st.side, m, blocks_of_message(m));
            st.flags = g.flags();
        },
        end);
    detail::group_writer g = detail::group_writer::from(end->flags);
    std::string system = end->side;
    std::string messages_tail;
    std::string_view shared = run;
    if (opt.cache_prompt && g.has_block && !g.marked) {  // the history's last block: the run's last bytes
        if (shared.empty() || shared.back() != '}') throw std::logic_error("anthropic: the history's last block does not end its run");
        shared.remove_suffix(1);
        messages_tail += R"(,"cache_control":{"type":"ephemeral"}})";
        g.marked = true;
    }
    for (const message& m : segs[2]) g.add(messages_tail, system, m, blocks_of_message(m));
    g.close(messages_tail);
    messages_tail.push_back(']');
    wire_body b = detail::body_frame(request, opt, system);
    b.head.push_back('[');
    b.shared = shared;
    b.tail.insert(0, messages_tail);
    return b;
}

/// A non-streaming answer.
[[nodiscard]] inline completion parse_answer(std::string_view body, const parse_limits& limits = {}) {
    json j;
    try {
        j = http::detail::parse_body(body, limits);
    } catch (const std::exception& e) {
        return http::malformed_answer(e.what());
    }
    if (!j.is_object()) return http::malformed_answer("not a JSON object");
    if (http::detail::string_member(j, "type") == "error" || (j.contains("error") && !j["error"].is_null())) return http::error_answer(200, body);
    detail::usage_sum u;
    if (const auto it = j.find("usage"); it != j.end()) u.add(*it);
    const auto content = j.find("content");
    if (content == j.end() || !content->is_array())
        return completion::failure_of("malformed answer: no content", http::malformed_failure(), u.get());
    message m;
    m.role = role::assistant;
    std::string thinking;
    bool has_thinking = false;
    for (const json& b : *content) {
        if (!b.is_object()) continue;
        const std::string type = http::detail::string_member(b, "type");
        if (type == "text" && b.contains("text") && b["text"].is_string()) {
            m.content += b["text"].get<std::string>();
        } else if (type == "tool_use") {
            tool_call c;
            c.id = http::detail::string_member(b, "id");
            c.name = http::detail::string_member(b, "name");
            c.arguments = b.contains("input") ? b["input"].dump(-1, ' ', false, json::error_handler_t::replace) : "{}";
            m.tool_calls.push_back(std::move(c));
        } else if (type == "thinking" && b.contains("thinking") && b["thinking"].is_string()) {
            thinking += b["thinking"].get<std::string>();
            has_thinking = true;
        }
    }
    if (m.content.empty() && !m.tool_calls.empty()) m.form = content_form::null;
    if (has_thinking) m.reasoning_content = std::move(thinking);
    completion c = completion::success(std::move(m), u.get());
    c.finish_reason = detail::finish_reason(http::detail::string_member(j, "stop_reason"));
    return c;
}

/// Accumulates a streamed answer from its events (message_start, content_block_start/_delta/_stop,
/// message_delta, message_stop, ping, error). Blocks are kept by their `index`.
class stream_accumulator {
public:
    explicit stream_accumulator(parse_limits limits = {}) : limits_(limits) {}

    bool add(std::string_view data) {
        if (failed_) return false;
        if (http::is_keep_alive(data)) return true;
        json j;
        try {
            j = http::detail::parse_body(data, limits_);
        } catch (const std::exception& e) {
            return fail(http::malformed_answer(std::string("a stream event: ") + e.what()));
        }
        if (!j.is_object()) return fail(http::malformed_answer("a stream event is not a JSON object"));
        const std::string type = http::detail::string_member(j, "type");
        if (type == "error") return fail(http::error_answer(200, data));
        if (type == "message_start") {
            started_ = true;
            if (j.contains("message") && j["message"].is_object() && j["message"].contains("usage")) used_.add(j["message"]["usage"]);
        } else if (type == "content_block_start") {
            block& b = at(j);
            if (j.contains("content_block") && j["content_block"].is_object()) {
                const json& cb = j["content_block"];
                b.type = http::detail::string_member(cb, "type");
                if (b.type == "tool_use") {
                    b.id = http::detail::string_member(cb, "id");
                    b.name = http::detail::string_member(cb, "name");
                } else if (b.type == "text" && cb.contains("text") && cb["text"].is_string()) {
                    b.text = cb["text"].get<std::string>();
                }
            }
        } else if (type == "content_block_delta") {
            block& b = at(j);
            if (!j.contains("delta") || !j["delta"].is_object()) return true;
            const json& d = j["delta"];
            const std::string dt = http::detail::string_member(d, "type");
            if (dt == "text_delta" && d.contains("text") && d["text"].is_string()) {
                const std::string& piece = d["text"].get_ref<const std::string&>();
                b.text += piece;
                if (on_text_) on_text_(piece);
            } else if (dt == "input_json_delta" && d.contains("partial_json") && d["partial_json"].is_string()) {
                b.input += d["partial_json"].get_ref<const std::string&>();
            } else if (dt == "thinking_delta" && d.contains("thinking") && d["thinking"].is_string()) {
                b.text += d["thinking"].get_ref<const std::string&>();
            }
        } else if (type == "message_delta") {
            if (j.contains("delta") && j["delta"].is_object()) {
                const std::string stop = http::detail::string_member(j["delta"], "stop_reason");
                if (!stop.empty()) stop_ = stop;
            }
            if (j.contains("usage")) used_.add(j["usage"]);
        } else if (type == "message_stop") {
            done_ = true;
        }
        return true;
    }

    void on_text(std::function<void(std::string_view)> f) { on_text_ = std::move(f); }
    [[nodiscard]] bool done() const noexcept { return done_; }
    [[nodiscard]] bool failed() const noexcept { return failed_; }

    [[nodiscard]] completion finish() && {
        if (failed_) {
            failure_.used = used_.get();
            return std::move(failure_);
        }
        if (!started_) return completion::failure_of("malformed answer: the stream had no message_start", http::malformed_failure(), used_.get());
        message m;
        m.role = role::assistant;
        std::string thinking;
        bool has_thinking = false;
        for (block& b : blocks_) {
            if (b.type == "text") {
                m.content += b.text;
            } else if (b.type == "thinking") {
                thinking += b.text;
                has_thinking = true;
            } else if (b.type == "tool_use") {
                tool_call c;
                c.id = std::move(b.id);
                c.name = std::move(b.name);
                c.arguments = b.input.empty() ? "{}" : std::move(b.input);
                m.tool_calls.push_back(std::move(c));
            }
        }
        if (m.content.empty() && !m.tool_calls.empty()) m.form = content_form::null;
        if (has_thinking) m.reasoning_content = std::move(thinking);
        completion c = completion::success(std::move(m), used_.get());
        c.finish_reason = detail::finish_reason(stop_);
        return c;
    }

private:
    struct block {
        std::string type, id, name, text, input;  // input: a tool_use block's arguments, in pieces
    };

    /// The block an event's `index` names; indices are dense and increasing in practice, a sparse one is
    /// appended at the end instead of growing a vector to it (an index of 10^9 costs one block, not 10^9).
    block& at(const json& j) {
        std::int64_t index = -1;
        if (const auto it = j.find("index"); it != j.end() && it->is_number_integer()) index = it->get<std::int64_t>();
        if (index >= 0 && static_cast<std::size_t>(index) < blocks_.size() && index_of_.empty()) return blocks_[static_cast<std::size_t>(index)];
        if (index == static_cast<std::int64_t>(blocks_.size()) && index_of_.empty()) return blocks_.emplace_back();
        if (const auto f = index_of_.find(index); f != index_of_.end()) return blocks_[f->second];
        if (index_of_.empty())  // leaving the dense case: remember where every block so far is
            for (std::size_t k = 0; k < blocks_.size(); ++k) index_of_.emplace(static_cast<std::int64_t>(k), k);
        index_of_.emplace(index, blocks_.size());
        return blocks_.emplace_back();
    }

    bool fail(completion c) {
        failed_ = true;
        failure_ = std::move(c);
        return false;
    }

    parse_limits limits_;
    std::vector<block> blocks_;
    std::unordered_map<std::int64_t, std::size_t> index_of_;
    detail::usage_sum used_;
    std::string stop_;
    completion failure_;
    std::function<void(std::string_view)> on_text_;
    bool started_ = false, done_ = false, failed_ = false;
};

} // namespace ania::anthropic
