// ania/json_writer.hpp -- messages and requests written straight into JSON text, without a DOM.
// SPDX-License-Identifier: MIT
//
// The wire body of a request is mostly its history: building an nlohmann DOM for 10,000 messages to dump it
// once costs more than everything else ania adds to a turn. The direct writer here produces the same bytes as
// `dump(m)` (json.hpp) for the common shapes and hands every other message to it, so the two cannot disagree.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <span>
#include <string>
#include <string_view>

#include <ania/concepts.hpp>
#include <ania/detail/simd.hpp>
#include <ania/json.hpp>
#include <ania/message.hpp>
#include <ania/text/utf8.hpp>
#include <ania/tool.hpp>

namespace ania {

namespace detail {

/// The escape of one byte JSON text must escape ('"', '\\', below 0x20), as nlohmann's dump writes it: \b \t
/// \n \f \r by name, the other control characters as \u00xx.
inline void append_escape(std::string& out, unsigned char c) {
    static constexpr char hex[] = "0123456789abcdef";
    switch (c) {
    case '"': out.append("\\\"", 2); break;
    case '\\': out.append("\\\\", 2); break;
    case '\b': out.append("\\b", 2); break;
    case '\t': out.append("\\t", 2); break;
    case '\n': out.append("\\n", 2); break;
    case '\f': out.append("\\f", 2); break;
    case '\r': out.append("\\r", 2); break;
    default: {
        const char esc[6] = {'\\', 'u', '0', '0', hex[c >> 4], hex[c & 0xF]};
        out.append(esc, 6);
    }
    }
}

/// The rest of a JSON string literal after its opening quote: `s` escaped exactly as nlohmann's dump does
/// (ensure_ascii off: `"` `\` and control characters only), then the closing quote. `s` must be valid UTF-8.
inline void append_json_chars(std::string& out, std::string_view s) {
    std::size_t run = 0;
    const std::size_t n = s.size();
    const auto* p = reinterpret_cast<const unsigned char*>(s.data());
    for (std::size_t i = 0; i < n; ++i) {
        i = escape_scan(p, i, n);  // 32 bytes a step where the CPU can (detail/simd.hpp)
        // Then eight bytes at a time while none of them is '"', '\\' or below 0x20 (the classic has-less test).
        while (i + 8 <= n) {
            std::uint64_t w;
            std::memcpy(&w, s.data() + i, 8);
            constexpr std::uint64_t ones = 0x0101010101010101ULL, high = 0x8080808080808080ULL;
            const std::uint64_t q = w ^ (ones * '"'), b = w ^ (ones * '\\');
            if ((((w - ones * 0x20) & ~w) | ((q - ones) & ~q) | ((b - ones) & ~b)) & high) break;
            i += 8;
        }
        if (i >= n) break;
        const auto c = p[i];
        if (c >= 0x20 && c != '"' && c != '\\') continue;
        out.append(s.data() + run, i - run);
        run = i + 1;
        append_escape(out, c);
    }
    out.append(s.data() + run, s.size() - run);
    out.push_back('"');
}

/// `s` as a JSON string literal (see append_json_chars).
inline void append_json_string(std::string& out, std::string_view s) {
    out.push_back('"');
    append_json_chars(out, s);
}

#ifdef ANIA_DETAIL_X86_DISPATCH
/// The characters of p[0..n) (n >= 32) escaped, appended, and checked to be valid UTF-8 in the same pass: per
/// block of 32, the escape mask and simd.hpp's UTF-8 block check of the same bytes (one read of the text
/// instead of a validation pass and then an escaping one). False when the text is not valid UTF-8; what was
/// appended is then to be dropped by the caller.
__attribute__((target("avx2"))) inline bool append_json_chars_checked_avx2(std::string& out, const unsigned char* p, std::size_t n) {
    using namespace simd;
    std::size_t run = 0;  // the first byte not yet appended
    const auto escapes = [&](unsigned m, std::size_t base) {
        for (; m != 0; m &= m - 1) {
            const std::size_t i = base + static_cast<std::size_t>(__builtin_ctz(m));
            out.append(reinterpret_cast<const char*>(p) + run, i - run);
            run = i + 1;
            append_escape(out, p[i]);
        }
    };
    unsigned char first[35] = {};  // three ASCII bytes before the text, then its first block
    std::memcpy(first + 3, p, 32);
    u8x32 err = utf8_block_errors(first + 3);
    escapes(escape_mask(p), 0);
    std::size_t i = 32;
    for (; i + 32 <= n; i += 32) {
        // A block of ASCII after ASCII (its three bytes before included) has nothing to check.
        if (movemask(load_u8(p + i) | load_u8(p + i - 3)) != 0) err |= utf8_block_errors(p + i);
        if (const unsigned m = escape_mask(p + i)) escapes(m, i);
    }
    bool cut = false;
    if (i < n) {  // the last bytes, followed by ASCII: a sequence cut short at the end shows as too short
        unsigned char last[35] = {};
        std::memcpy(last, p + i - 3, n - i + 3);
        err |= utf8_block_errors(last + 3);
        escapes(escape_mask(p + n - 32) >> (i - (n - 32)), i);  // the last 32 bytes, those before i masked off
    } else {  // a sequence cut short by the end itself
        cut = p[n - 1] >= 0xC0 || p[n - 2] >= 0xE0 || p[n - 3] >= 0xF0;
    }
    out.append(reinterpret_cast<const char*>(p) + run, n - run);
    const auto bad = err != 0;
    return !cut && movemask(reinterpret_cast<const u8x32&>(bad)) == 0;
}
#endif

/// The rest of a JSON string literal after its opening quote (which the caller wrote with the member's key):
/// `s` escaped, then the closing quote. False if `s` is not valid UTF-8 (then what was appended is to be
/// dropped: the caller writes the message through dump, which replaces the bytes). One pass over long text.
[[nodiscard]] inline bool append_json_chars_checked(std::string& out, std::string_view s) {
#ifdef ANIA_DETAIL_X86_DISPATCH
    if (s.size() >= 32 && simd::has_avx2()) {
        if (!append_json_chars_checked_avx2(out, reinterpret_cast<const unsigned char*>(s.data()), s.size())) return false;
        out.push_back('"');
        return true;
    }
#endif
    if (!text::is_valid_utf8(s)) return false;
    append_json_chars(out, s);
    return true;
}

/// append_json_string when `s` may be invalid UTF-8: false if it is (see append_json_chars_checked).
[[nodiscard]] inline bool append_json_string_checked(std::string& out, std::string_view s) {
    out.push_back('"');
    return append_json_chars_checked(out, s);
}

/// append_json_string for text that may be invalid UTF-8: replaced by U+FFFD first, as dump's
/// error_handler_t::replace does; valid text (the usual case) is not copied.
inline void append_json_string_repaired(std::string& out, std::string_view s) {
    if (text::is_valid_utf8(s)) append_json_string(out, s);
    else append_json_string(out, text::repair_utf8(s));
}

/// `,"key":` (`"key":` for the first member), in one append: `member` is the literal with its comma (and the
/// opening quote of a string value, which append_json_chars_checked then continues).
template <std::size_t N>
inline void append_json_key(std::string& out, const char (&member)[N], bool& first) {
    const std::size_t skip = first ? 1 : 0;
    out.append(member + skip, N - 1 - skip);
    first = false;
}

/// Whether the direct writer models every member of `m`: no members it does not model (extras, parts of another
/// kind, extra members of a call or an image). Its strings are checked as they are written (a string that is not
/// valid UTF-8 sends the message to dump, which replaces the bytes). Anything else goes through dump.
[[nodiscard]] inline bool direct_shape(const message& m) noexcept {
    if (!m.extra.empty()) return false;
    if (m.form == content_form::parts)
        for (const content_part& p : m.parts)
            if (p.type == content_part::kind::other || !p.extra.empty() || !p.image_extra.empty()) return false;
    for (const tool_call& c : m.tool_calls)
        if (!c.extra.empty() || !c.function_extra.empty()) return false;
    return true;
}

/// About the size of `m`'s JSON text (keys, escapes of a usual text): for a reservation, not a bound.
[[nodiscard]] inline std::size_t wire_size_estimate(const message& m) noexcept {
    std::size_t n = 40 + m.content.size();
    if (m.reasoning_content) n += 24 + m.reasoning_content->size();
    if (m.tool_call_id) n += 20 + m.tool_call_id->size();
    if (m.name) n += 12 + m.name->size();
    for (const tool_call& c : m.tool_calls) n += 72 + c.id.size() + c.name.size() + c.arguments.size() + c.arguments.size() / 8;
    for (const content_part& p : m.parts) n += 48 + p.text.size() + p.url.size();
    return n + m.content.size() / 16;
}

/// One member of `m`, as write_field (json.hpp) writes it into a DOM. `ok` turns false when a string is not
/// valid UTF-8 (the caller then drops what was written).
inline void append_field(std::string& out, const message& m, wire_field f, const write_options& opt, bool& first, bool& ok) {
    switch (f) {
    case wire_field::role: {
        // The member whole, in one append (a role is one of five constants).
        static constexpr std::string_view roles[] = {R"(,"role":"system")", R"(,"role":"developer")", R"(,"role":"user")",
                                                     R"(,"role":"assistant")", R"(,"role":"tool")"};
        const auto r = static_cast<std::size_t>(m.role);
        const std::string_view member = r < std::size(roles) ? roles[r] : roles[2];
        out.append(member.data() + (first ? 1 : 0), member.size() - (first ? 1 : 0));
        first = false;
        break;
    }
    case wire_field::content: {
        switch (written_form(m, opt)) {
        case content_form::text:
            append_json_key(out, R"(,"content":")", first);
            ok &= append_json_chars_checked(out, m.form == content_form::text ? std::string_view(m.content) : std::string_view());
            break;
        case content_form::null:
            append_json_key(out, R"(,"content":)", first);
            out.append("null", 4);
            break;
        case content_form::parts: {
            append_json_key(out, R"(,"content":)", first);
            out.push_back('[');
            bool first_part = true;
            for (const content_part& p : m.parts) {
                if (!first_part) out.push_back(',');
                first_part = false;
                if (p.type == content_part::kind::text) {
                    out.append(R"({"type":"text","text":")");
                    ok &= append_json_chars_checked(out, p.text);
                } else {
                    out.append(R"({"type":"image_url","image_url":{"url":")");
                    ok &= append_json_chars_checked(out, p.url);
                    if (p.detail) {
                        out.append(R"(,"detail":")");
                        ok &= append_json_chars_checked(out, *p.detail);
                    }
                    out.push_back('}');
                }
                out.push_back('}');
            }
            out.push_back(']');
            break;
        }
        case content_form::absent: break;
        }
        break;
    }
    case wire_field::name:
        if (m.name) {
            append_json_key(out, R"(,"name":")", first);
            ok &= append_json_chars_checked(out, *m.name);
        }
        break;
    case wire_field::tool_calls:
        if (m.has_tool_calls()) {
            append_json_key(out, R"(,"tool_calls":)", first);
            out.push_back('[');
            bool first_call = true;
            for (const tool_call& c : m.tool_calls) {
                if (!first_call) out.push_back(',');
                first_call = false;
                out.append(R"({"id":")");
                ok &= append_json_chars_checked(out, c.id);
                out.append(R"(,"type":")");
                ok &= append_json_chars_checked(out, c.type);
                out.append(R"(,"function":{"name":")");
                ok &= append_json_chars_checked(out, c.name);
                out.append(R"(,"arguments":")");
                ok &= append_json_chars_checked(out, c.arguments);
                out.append("}}", 2);
            }
            out.push_back(']');
        }
        break;
    case wire_field::tool_call_id:
        if (m.tool_call_id) {
            append_json_key(out, R"(,"tool_call_id":")", first);
            ok &= append_json_chars_checked(out, *m.tool_call_id);
        }
        break;
    case wire_field::reasoning:
        if (m.reasoning_content && opt.include_reasoning) {
            append_json_key(out, R"(,"reasoning_content":")", first);
            ok &= append_json_chars_checked(out, *m.reasoning_content);
        }
        break;
    case wire_field::extras:  // direct_writable: none
    case wire_field::none: break;
    }
}

} // namespace detail

/// Appends the compact JSON text of `m` to `out`: the same bytes as `dump(m, opt)`, several times faster for
/// the shapes a conversation is made of (text, image parts, tool calls and results); any other message is
/// written by dump itself.
inline void append_json(std::string& out, const message& m, const write_options& opt = {}) {
    const std::size_t mark = out.size();
    if (detail::direct_shape(m)) {
        using detail::wire_field;
        out.push_back('{');
        bool first = true, ok = true;
        bool written[8] = {};
        for (std::uint32_t order = m.wire_order; order != 0; order >>= 4) {
            const auto f = static_cast<wire_field>(order & 0xF);
            if (static_cast<unsigned>(f) < 8 && !written[static_cast<unsigned>(f)]) {
                detail::append_field(out, m, f, opt, first, ok);
                written[static_cast<unsigned>(f)] = true;
            }
        }
        for (const wire_field f : {wire_field::role, wire_field::content, wire_field::reasoning, wire_field::tool_calls,
                                   wire_field::tool_call_id, wire_field::name})
            if (!written[static_cast<unsigned>(f)]) detail::append_field(out, m, f, opt, first, ok);
        out.push_back('}');
        if (ok) return;
        out.resize(mark);  // a string was not valid UTF-8: dump replaces its bytes
    }
    out += dump(m, opt);
}

/// Appends the messages as a JSON array (a request's `messages`).
inline void append_json(std::string& out, const message_sequence& msgs, const write_options& opt = {}) {
    out.push_back('[');
    bool first = true;
    for (const message& m : msgs) {
        if (!first) out.push_back(',');
        first = false;
        append_json(out, m, opt);
    }
    out.push_back(']');
}

namespace detail {

/// `{"model":…,"messages":[`: what a chat-completions body starts with.
inline void append_request_open(std::string& out, std::string_view model) {
    out.append(R"({"model":)");
    append_json_string_repaired(out, model);
    out.append(R"(,"messages":)");
    out.push_back('[');
}

/// `,"tools":[…]` (nothing when there are none): the member after the messages.
inline void append_request_tools(std::string& out, std::span<const tool> tools) {
    if (tools.empty()) return;
    out.append(R"(,"tools":[)");
    bool first = true;
    for (const tool& t : tools) {
        if (!first) out.push_back(',');
        first = false;
        // tool::definition()'s bytes, written directly: the parameters are compact JSON text already.
        out.append(R"({"type":"function","function":{"name":)");
        append_json_string_repaired(out, t.name);
        out.append(R"(,"description":)");
        append_json_string_repaired(out, t.description);
        out.append(R"(,"parameters":)");
        out.append(t.parameters.empty() ? no_parameters_schema : t.parameters.text());
        out.append("}}");
    }
    out.push_back(']');
}

} // namespace detail

/// The body of an OpenAI chat-completions request: `{"model":…,"messages":[…],"tools":[…]}` (`tools` left
/// out when the request has none). A client adds its own members (stream, temperature, …) after these.
[[nodiscard]] inline std::string request_to_json(const chat_request& request, std::string_view model,
                                                 const write_options& opt = {}) {
    std::string out;
    // A reservation a little above the usual size: one that falls short doubles a multi-megabyte buffer
    // and copies it (that was an eighth of the time at 10k messages).
    std::size_t estimate = 64 + model.size();
    for (const auto& seg : request.messages.segments())
        for (const message& m : seg) estimate += detail::wire_size_estimate(m);
    out.reserve(estimate + estimate / 16);
    detail::append_request_open(out, model);
    out.pop_back();  // append_json writes the bracket
    append_json(out, request.messages, opt);
    detail::append_request_tools(out, request.tools);
    out.push_back('}');
    return out;
}

} // namespace ania
