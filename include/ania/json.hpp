// ania/json.hpp -- JSON in and out: parse limits, messages and usage in the OpenAI wire format.
// SPDX-License-Identifier: MIT
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include <ania/detail/fast_message_parser.hpp>
#include <ania/detail/message_shape.hpp>
#include <ania/error.hpp>
#include <ania/json_fwd.hpp>
#include <ania/log.hpp>
#include <ania/message.hpp>
#include <ania/text/utf8.hpp>
#include <ania/usage.hpp>

namespace ania {

/// `object`'s members as json_members (an empty object: none). Throws ania::error (invalid_argument) when
/// `object` is not an object. (The converting constructor, named.)
[[nodiscard]] inline json_members members_from(const json& object) { return json_members(object); }
/// The members as a JSON object (empty when there are none).
[[nodiscard]] inline json to_json(const json_members& m) {
    if (m.empty()) return json::object();
    return json::parse(std::string_view(m.text()));  // written by members_from: valid
}

namespace detail {

/// Depth of the deepest array/object nesting in JSON text, stopping early once it passes `limit`.
[[nodiscard]] inline std::size_t json_nesting_depth(std::string_view s, std::size_t limit) noexcept {
    std::size_t depth = 0, deepest = 0;
    bool in_string = false;
    for (std::size_t i = 0; i < s.size(); ++i) {
        const char c = s[i];
        if (in_string) {
            if (c == '\\') ++i;
            else if (c == '"') in_string = false;
            continue;
        }
        switch (c) {
        case '"': in_string = true; break;
        case '[': case '{':
            if (++depth > deepest) {
                deepest = depth;
                if (deepest > limit) return deepest;
            }
            break;
        case ']': case '}':
            if (depth > 0) --depth;
            break;
        default: break;
        }
    }
    return deepest;
}

/// Depth of a JSON value, with an explicit stack (no recursion), stopping once it passes `limit`.
[[nodiscard]] inline std::size_t json_value_depth(const json& root, std::size_t limit) {
    std::size_t deepest = 0;
    std::vector<std::pair<const json*, std::size_t>> stack{{&root, 1}};
    while (!stack.empty()) {
        auto [v, d] = stack.back();
        stack.pop_back();
        if (!v->is_structured()) continue;
        if (d > deepest) deepest = d;
        if (deepest > limit) return deepest;
        for (const json& child : *v) stack.emplace_back(&child, d + 1);
    }
    return deepest;
}

[[nodiscard]] inline const char* type_name(const json& v) noexcept { return v.type_name(); }

/// Where in a message a value sits, built into text only when an error is reported.
struct json_path {
    const json_path* parent = nullptr;
    std::string_view key;
    std::size_t index = static_cast<std::size_t>(-1);

    [[nodiscard]] std::string str() const {
        std::string out = parent ? parent->str() : std::string();
        if (!key.empty()) {
            if (!out.empty()) out.push_back('.');
            out.append(key);
        }
        if (index != static_cast<std::size_t>(-1)) out += "[" + std::to_string(index) + "]";
        return out.empty() ? std::string("message") : out;
    }
};

[[noreturn]] inline void throw_shape(const json_path& at, std::string_view what) {
    throw error(errc::invalid_message, at.str() + ": " + std::string(what));
}

/// Reads JSON values into ania's types. With `move_from`, strings and extras are moved out of the input.
class reader {
public:
    reader(bool move_from, bool check_utf8) noexcept : move_(move_from), check_utf8_(check_utf8) {}

    message read_message(json& j) const {
        const json_path root{};
        if (!j.is_object()) throw_shape(root, std::string("expected an object, got ") + type_name(j));
        message m;
        bool has_role = false;
        wire_order_recorder order;
        bool extras_recorded = false;
        json extras;
        for (auto it = j.begin(); it != j.end(); ++it) {
            const std::string& k = it.key();
            json& v = it.value();
            const json_path at{&root, k};
            const wire_field f = member_field(k);
            switch (f) {
            case wire_field::role: {
                const std::string r = read_string(v, at);
                const auto parsed = role_from_string(r);
                if (!parsed)
                    throw_shape(at, "unknown role \"" + r + "\"; expected one of system, developer, user, "
                                                           "assistant, tool");
                m.role = *parsed;
                has_role = true;
                break;
            }
            case wire_field::content: read_content(v, m, at); break;
            case wire_field::name: m.name = read_string(v, at); break;
            case wire_field::tool_calls: read_tool_calls(v, m, at); break;
            case wire_field::tool_call_id: m.tool_call_id = read_string(v, at); break;
            case wire_field::reasoning:
                if (!v.is_null()) m.reasoning_content = read_string(v, at);  // null == not given
                break;
            default:
                if (extras.is_null()) extras = json::object();
                extras[k] = take(v);
                if (extras_recorded) continue;  // recorded once, where the first one stood
                extras_recorded = true;
                break;
            }
            order.record(f);
        }
        if (const shape_violation* bad = check_message_shape(m, has_role)) throw_shape(json_path{&root, bad->member}, bad->what);
        if (!extras.is_null()) m.extra = members_from(extras);
        if (!j.contains("content")) m.form = content_form::absent;
        m.wire_order = order.order;
        return m;
    }

    usage read_usage(const json& j, const log_sink& log = {}) const {
        usage u;
        if (j.is_null()) return u;
        if (!j.is_object()) throw error(errc::invalid_message, std::string("usage: expected an object, got ") + type_name(j));
        const auto field = [&](const json& obj, const char* key, std::optional<std::int64_t>& out) {
            const auto it = obj.find(key);
            if (it == obj.end() || it->is_null()) return;
            if (!it->is_number_integer() && !it->is_number_unsigned())
                throw error(errc::invalid_message, std::string("usage.") + key + ": expected an integer, got " + type_name(*it));
            if (it->is_number_unsigned()) {
                const auto v = it->template get<std::uint64_t>();
                if (v > static_cast<std::uint64_t>(INT64_MAX)) {
                    if (log) log_to(log, log_level::warn, std::string("usage.") + key + ": " + std::to_string(v) + " saturated to INT64_MAX");
                    out = INT64_MAX;
                    return;
                }
                out = static_cast<std::int64_t>(v);
                return;
            }
            const auto v = it->template get<std::int64_t>();
            if (v < 0) {
                if (log) log_to(log, log_level::warn, std::string("usage.") + key + ": negative (" + std::to_string(v) + "), ignored");
                return;
            }
            out = v;
        };
        field(j, "prompt_tokens", u.prompt_tokens);
        field(j, "completion_tokens", u.completion_tokens);
        field(j, "total_tokens", u.total_tokens);
        if (const auto d = j.find("prompt_tokens_details"); d != j.end() && d->is_object())
            field(*d, "cached_tokens", u.cached_prompt_tokens);
        if (!u.cached_prompt_tokens) field(j, "prompt_cache_hit_tokens", u.cached_prompt_tokens);
        return u;
    }

private:
    json take(json& v) const { return move_ ? std::move(v) : v; }

    std::string read_string(json& v, const json_path& at) const {
        if (!v.is_string()) throw_shape(at, std::string("expected a string, got ") + type_name(v));
        std::string s = move_ ? std::move(v.get_ref<std::string&>()) : v.get_ref<const std::string&>();
        if (check_utf8_) text::repair_utf8_in_place(s);
        return s;
    }

    void read_content(json& v, message& m, const json_path& at) const {
        if (v.is_string()) {
            m.form = content_form::text;
            m.content = read_string(v, at);
        } else if (v.is_null()) {
            m.form = content_form::null;
        } else if (v.is_array()) {
            m.form = content_form::parts;
            m.parts.reserve(v.size());
            for (std::size_t i = 0; i < v.size(); ++i) m.parts.push_back(read_part(v[i], json_path{&at, {}, i}));
        } else {
            throw_shape(at, std::string("expected a string, an array of parts or null, got ") + type_name(v));
        }
    }

    content_part read_part(json& v, const json_path& at) const {
        if (!v.is_object()) throw_shape(at, std::string("expected an object, got ") + type_name(v));
        const auto t = v.find("type");
        if (t == v.end() || !t->is_string()) throw_shape(json_path{&at, "type"}, "missing or not a string");
        content_part p;
        const std::string& type = t->get_ref<const std::string&>();
        if (type == "text") {
            p.type = content_part::kind::text;
            const auto tx = v.find("text");
            if (tx == v.end()) throw_shape(json_path{&at, "text"}, "missing");
            p.text = read_string(*tx, json_path{&at, "text"});
            copy_extras(v, p.extra, {"type", "text"});
        } else if (type == "image_url") {
            p.type = content_part::kind::image_url;
            const auto img = v.find("image_url");
            const json_path img_at{&at, "image_url"};
            if (img == v.end() || !img->is_object()) throw_shape(img_at, "expected an object with a url");
            const auto url = img->find("url");
            if (url == img->end()) throw_shape(json_path{&img_at, "url"}, "missing");
            p.url = read_string(*url, json_path{&img_at, "url"});
            if (const auto d = img->find("detail"); d != img->end() && !d->is_null())
                p.detail = read_string(*d, json_path{&img_at, "detail"});
            copy_extras(*img, p.image_extra, {"url", "detail"});
            copy_extras(v, p.extra, {"type", "image_url"});
        } else {
            p.type = content_part::kind::other;  // input_audio, file, ...: kept whole
            p.extra = members_from(v);
        }
        return p;
    }

    void read_tool_calls(json& v, message& m, const json_path& at) const {
        if (v.is_null()) return;
        if (!v.is_array()) throw_shape(at, std::string("expected an array, got ") + type_name(v));
        m.tool_calls.reserve(v.size());
        for (std::size_t i = 0; i < v.size(); ++i) {
            const json_path call_at{&at, {}, i};
            json& c = v[i];
            if (!c.is_object()) throw_shape(call_at, std::string("expected an object, got ") + type_name(c));
            tool_call tc;
            const auto id = c.find("id");
            if (id == c.end()) throw_shape(json_path{&call_at, "id"}, "missing");
            tc.id = read_string(*id, json_path{&call_at, "id"});
            if (const auto ty = c.find("type"); ty != c.end()) tc.type = read_string(*ty, json_path{&call_at, "type"});
            const auto fn = c.find("function");
            const json_path fn_at{&call_at, "function"};
            if (fn == c.end() || !fn->is_object()) throw_shape(fn_at, "expected an object with name and arguments");
            const auto name = fn->find("name");
            if (name == fn->end()) throw_shape(json_path{&fn_at, "name"}, "missing");
            tc.name = read_string(*name, json_path{&fn_at, "name"});
            if (const auto args = fn->find("arguments"); args != fn->end() && !args->is_null()) {
                if (args->is_string()) tc.arguments = read_string(*args, json_path{&fn_at, "arguments"});
                else tc.arguments = args->dump(-1, ' ', false, json::error_handler_t::replace);  // some servers send an object
            }
            copy_extras(*fn, tc.function_extra, {"name", "arguments"});
            copy_extras(c, tc.extra, {"id", "type", "function"});
            m.tool_calls.push_back(std::move(tc));
        }
    }

    void copy_extras(json& obj, json_members& out, std::initializer_list<std::string_view> known) const {
        json extras;
        for (auto it = obj.begin(); it != obj.end(); ++it) {
            bool modelled = false;
            for (const std::string_view k : known) modelled = modelled || it.key() == k;
            if (modelled) continue;
            if (extras.is_null()) extras = json::object();
            extras[it.key()] = take(it.value());
        }
        if (!extras.is_null()) out = members_from(extras);
    }

    bool move_;
    bool check_utf8_;
};

inline void put_extras(json& out, const json_members& extra) {
    if (extra.empty()) return;
    json members = to_json(extra);
    for (auto it = members.begin(); it != members.end(); ++it) out[it.key()] = std::move(it.value());
}

inline json write_part(const content_part& p) {
    if (p.type == content_part::kind::other) return to_json(p.extra);
    json j = json::object();
    if (p.type == content_part::kind::text) {
        j["type"] = "text";
        j["text"] = p.text;
    } else {
        j["type"] = "image_url";
        json img = json::object();
        img["url"] = p.url;
        if (p.detail) img["detail"] = *p.detail;
        put_extras(img, p.image_extra);
        j["image_url"] = std::move(img);
    }
    put_extras(j, p.extra);
    return j;
}

inline json write_tool_call(const tool_call& c) {
    json j = json::object();
    j["id"] = c.id;
    j["type"] = c.type;
    json fn = json::object();
    fn["name"] = c.name;
    fn["arguments"] = c.arguments;
    put_extras(fn, c.function_extra);
    j["function"] = std::move(fn);
    put_extras(j, c.extra);
    return j;
}

/// The form `content` is written in: the message's own, except for an assistant message that only calls
/// tools (write_options::empty_tool_call_content).
[[nodiscard]] inline content_form written_form(const message& m, const write_options& opt) noexcept {
    if (m.role != role::assistant || !m.has_tool_calls() || !m.content_empty()) return m.form;
    using tcc = write_options::tool_call_content;
    switch (opt.empty_tool_call_content) {
    case tcc::keep: break;
    case tcc::null: return content_form::null;
    case tcc::empty_string: return content_form::text;
    case tcc::omit: return content_form::absent;
    }
    return m.form;
}

inline void write_field(json& j, const message& m, wire_field f, const write_options& opt) {
    switch (f) {
    case wire_field::role: j["role"] = to_string(m.role); break;
    case wire_field::content: {
        switch (written_form(m, opt)) {
        case content_form::text: j["content"] = m.form == content_form::text ? m.content : std::string(); break;
        case content_form::null: j["content"] = nullptr; break;
        case content_form::parts: {
            json arr = json::array();
            for (const content_part& p : m.parts) arr.push_back(write_part(p));
            j["content"] = std::move(arr);
            break;
        }
        case content_form::absent: break;
        }
        break;
    }
    case wire_field::name: if (m.name) j["name"] = *m.name; break;
    case wire_field::tool_calls:
        if (m.has_tool_calls()) {
            json arr = json::array();
            for (const tool_call& c : m.tool_calls) arr.push_back(write_tool_call(c));
            j["tool_calls"] = std::move(arr);
        }
        break;
    case wire_field::tool_call_id: if (m.tool_call_id) j["tool_call_id"] = *m.tool_call_id; break;
    case wire_field::reasoning:
        if (m.reasoning_content && opt.include_reasoning) j["reasoning_content"] = *m.reasoning_content;
        break;
    case wire_field::extras: put_extras(j, m.extra); break;
    case wire_field::none: break;
    }
}

} // namespace detail

/// Parses JSON text within `limits`. Invalid UTF-8 is repaired to U+FFFD first (nlohmann rejects it).
/// Throws ania::error: limit_exceeded (naming the limit) or parse_error (with nlohmann's position).
[[nodiscard]] inline json parse_json(std::string_view text, const parse_limits& limits = {}) {
    if (text.size() > limits.max_bytes)
        throw error(errc::limit_exceeded, "document of " + std::to_string(text.size()) + " bytes exceeds max_bytes = " +
                                              std::to_string(limits.max_bytes));
    if (const std::size_t d = detail::json_nesting_depth(text, limits.max_depth); d > limits.max_depth)
        throw error(errc::limit_exceeded, "nesting depth exceeds max_depth = " + std::to_string(limits.max_depth));
    try {
        // Always a string_view: each input type instantiates nlohmann's whole lexer and parser again.
        if (text::is_valid_utf8(text)) return json::parse(text);
        const std::string repaired = text::repair_utf8(text);
        return json::parse(std::string_view(repaired));
    } catch (const json::exception& e) {  // parse_error, and out_of_range for a number like 1e400
        // nlohmann quotes the bytes it last read, which can end inside a UTF-8 sequence.
        throw error(errc::parse_error, text::repair_utf8(e.what()));
    }
}

namespace detail {
/// Runs `f`, turning any nlohmann exception that escapes it into ania::error(code): every entry point that
/// reads JSON reports bad input as ania::error, never as a library-specific type a caller does not catch.
template <class F>
decltype(auto) with_json_errors(errc code, const char* what, F&& f) {
    try {
        return f();
    } catch (const json::exception& e) {
        throw error(code, std::string(what) + ": " + text::repair_utf8(e.what()));
    }
}
} // namespace detail

/// Reads a message from a JSON value (strings with invalid UTF-8 are repaired). Throws ania::error
/// (invalid_message) naming the member that is wrong, or limit_exceeded when `j` nests deeper than allowed.
[[nodiscard]] inline message message_from_json(const json& j, const parse_limits& limits = {}) {
    if (detail::json_value_depth(j, limits.max_depth) > limits.max_depth)
        throw error(errc::limit_exceeded, "nesting depth exceeds max_depth = " + std::to_string(limits.max_depth));
    return detail::with_json_errors(errc::invalid_message, "message", [&] {
        return detail::reader(false, true).read_message(const_cast<json&>(j));  // copies, never writes (move_from = false)
    });
}

namespace detail {
/// The general path: nlohmann's DOM, then the reader. Every shape, every error.
[[nodiscard]] inline message parse_message_general(std::string_view text, const parse_limits& limits) {
    json j = parse_json(text, limits);
    return with_json_errors(errc::invalid_message, "message", [&] {
        return reader(true, false).read_message(j);  // parse_json already repaired the text
    });
}
} // namespace detail

/// Parses one message from JSON text within `limits`. Throws ania::error as parse_json and message_from_json
/// do. The common shapes take a direct parser (several times faster); anything else the general one.
[[nodiscard]] inline message parse_message(std::string_view text, const parse_limits& limits = {}) {
    // The direct parser nests 4 levels at most, so it is exact for any max_depth >= 4.
    if (text.size() <= limits.max_bytes && limits.max_depth >= 4 && text::is_valid_utf8(text)) {
        message m;
        if (detail::fast_message_parser(text).parse(m)) return m;
    }
    return detail::parse_message_general(text, limits);
}

/// The message in the wire format. Members parsed from JSON keep their order; others follow in
/// the canonical order role, content, reasoning_content, tool_calls, tool_call_id, name, extras.
[[nodiscard]] inline json to_json(const message& m, const write_options& opt = {}) {
    using detail::wire_field;
    json j = json::object();
    bool written[8] = {};
    for (std::uint32_t order = m.wire_order; order != 0; order >>= 4) {
        const auto f = static_cast<wire_field>(order & 0xF);
        if (static_cast<unsigned>(f) < 8 && !written[static_cast<unsigned>(f)]) {
            detail::write_field(j, m, f, opt);
            written[static_cast<unsigned>(f)] = true;
        }
    }
    for (const wire_field f : {wire_field::role, wire_field::content, wire_field::reasoning, wire_field::tool_calls,
                               wire_field::tool_call_id, wire_field::name, wire_field::extras})
        if (!written[static_cast<unsigned>(f)]) detail::write_field(j, m, f, opt);
    return j;
}

/// Compact JSON text of the message; never throws on bad UTF-8 (replaced by U+FFFD).
[[nodiscard]] inline std::string dump(const message& m, const write_options& opt = {}) {
    return to_json(m, opt).dump(-1, ' ', false, json::error_handler_t::replace);
}

/// A JSON array of messages, as sent in a request's `messages`.
[[nodiscard]] inline json to_json(const std::vector<message>& ms, const write_options& opt = {}) {
    json arr = json::array();
    for (const message& m : ms) arr.push_back(to_json(m, opt));
    return arr;
}

/// Reads the `usage` object of a chat-completions response (null or absent members stay nullopt). A count
/// above INT64_MAX is saturated to it; a negative count is not a count: left unreported. Both are logged to
/// `log` when given. A member of another type is an ania::error (invalid_message).
[[nodiscard]] inline usage usage_from_json(const json& j, const log_sink& log = {}) {
    return detail::with_json_errors(errc::invalid_message, "usage", [&] { return detail::reader(false, false).read_usage(j, log); });
}

/// `usage` in the OpenAI wire format; members that were not reported are left out.
[[nodiscard]] inline json to_json(const usage& u) {
    json j = json::object();
    if (u.prompt_tokens) j["prompt_tokens"] = *u.prompt_tokens;
    if (u.completion_tokens) j["completion_tokens"] = *u.completion_tokens;
    if (u.total_tokens) j["total_tokens"] = *u.total_tokens;
    if (u.cached_prompt_tokens) j["prompt_tokens_details"] = json{{"cached_tokens", *u.cached_prompt_tokens}};
    return j;
}

/// Per-turn statistics, for logs and dashboards.
[[nodiscard]] inline json to_json(const turn_stats& s) {
    json j = json::object();
    j["usage"] = to_json(s.total);
    j["last_prompt_tokens"] = s.last_prompt_tokens;
    j["iterations"] = s.iterations;
    j["compress_usage"] = to_json(s.compress_usage);
    return j;
}

// nlohmann ADL hooks, so that `json j = msg;` and `j.get<ania::message>()` work.
inline void to_json(json& j, const message& m) { j = to_json(m); }
inline void from_json(const json& j, message& m) { m = message_from_json(j); }
inline void to_json(json& j, const usage& u) { j = to_json(u); }
inline void from_json(const json& j, usage& u) { u = usage_from_json(j); }

} // namespace ania
