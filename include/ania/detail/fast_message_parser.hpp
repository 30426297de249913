// ania/detail/fast_message_parser.hpp -- a direct parser for the common shapes of a message (no DOM).
// SPDX-License-Identifier: MIT
// Loading history parses every stored row, and nlohmann's DOM costs ~2.4 us per message. This parser reads
// the members ania models straight into a `message`; anything else (an unknown member, an unusual type, a
// duplicate key, invalid JSON, ...) makes it give up, and the caller parses with nlohmann instead, which
// gives the same result or the proper error. A test checks both agree on every message of the data set.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include <ania/detail/json_unescape.hpp>
#include <ania/detail/message_shape.hpp>
#include <ania/message.hpp>

namespace ania::detail {

class fast_message_parser {
public:
    explicit fast_message_parser(std::string_view text) noexcept : s_(text) {}

    /// True when `out` holds the message; false means "use the general parser" (out is then unspecified).
    bool parse(message& out) {
        ws();
        if (!eat('{')) return false;
        wire_order_recorder order;
        unsigned seen = 0;
        bool has_role = false;
        out.form = content_form::absent;
        ws();
        if (peek() == '}') return false;  // no role: let the general parser report it
        while (true) {
            std::string_view key;
            if (!read_plain_key(key)) return false;
            ws();
            if (!eat(':')) return false;
            ws();
            const wire_field f = member_field(key);
            switch (f) {
            case wire_field::role: {
                std::string r;
                if (!read_string(r)) return false;
                const auto parsed = role_from_string(r);
                if (!parsed) return false;
                out.role = *parsed;
                has_role = true;
                break;
            }
            case wire_field::content:
                if (!read_content(out)) return false;
                break;
            case wire_field::name: {
                std::string v;
                if (!read_string(v)) return false;
                out.name = std::move(v);
                break;
            }
            case wire_field::tool_calls:
                if (!read_tool_calls(out)) return false;
                break;
            case wire_field::tool_call_id: {
                std::string v;
                if (!read_string(v)) return false;
                out.tool_call_id = std::move(v);
                break;
            }
            case wire_field::reasoning:
                if (peek() == 'n') {
                    if (!literal("null")) return false;  // null == not given
                } else {
                    std::string v;
                    if (!read_string(v)) return false;
                    out.reasoning_content = std::move(v);
                }
                break;
            default: return false;  // a member ania does not model: the general parser keeps it
            }
            const unsigned bit = 1u << static_cast<unsigned>(f);
            if (seen & bit) return false;  // duplicate key
            seen |= bit;
            order.record(f);
            ws();
            if (eat(',')) { ws(); continue; }
            if (eat('}')) break;
            return false;
        }
        ws();
        if (pos_ != s_.size() || check_message_shape(out, has_role)) return false;  // the general parser reports it
        out.wire_order = order.order;
        return true;
    }

private:
    [[nodiscard]] char peek() const noexcept { return pos_ < s_.size() ? s_[pos_] : '\0'; }
    bool eat(char c) noexcept {
        if (peek() != c) return false;
        ++pos_;
        return true;
    }
    void ws() noexcept {
        while (pos_ < s_.size() && (s_[pos_] == ' ' || s_[pos_] == '\n' || s_[pos_] == '\r' || s_[pos_] == '\t')) ++pos_;
    }
    bool literal(std::string_view lit) noexcept {
        if (s_.substr(pos_, lit.size()) != lit) return false;
        pos_ += lit.size();
        return true;
    }

    /// A key without escapes (every key ania models is plain ASCII).
    bool read_plain_key(std::string_view& key) noexcept {
        if (!eat('"')) return false;
        const std::size_t b = pos_;
        while (pos_ < s_.size() && s_[pos_] != '"') {
            if (s_[pos_] == '\\' || static_cast<unsigned char>(s_[pos_]) < 0x20) return false;
            ++pos_;
        }
        if (pos_ >= s_.size()) return false;
        key = s_.substr(b, pos_ - b);
        ++pos_;
        return true;
    }

    /// A JSON string (the input is valid UTF-8, checked by the caller).
    bool read_string(std::string& out) {
        if (!eat('"')) return false;
        std::size_t run = pos_;
        while (true) {
            // Copy the longest run without quote, backslash or control character in one go.
            while (pos_ < s_.size()) {
                const auto c = static_cast<unsigned char>(s_[pos_]);
                if (c == '"' || c == '\\' || c < 0x20) break;
                ++pos_;
            }
            out.append(s_.data() + run, pos_ - run);
            if (pos_ >= s_.size()) return false;
            const char c = s_[pos_++];
            if (c == '"') return true;
            if (c != '\\') return false;  // raw control character: invalid JSON
            if (pos_ >= s_.size()) return false;
            if (!decode_json_escape(s_, pos_, out)) return false;
            run = pos_;
        }
    }

    bool read_content(message& m) {
        if (peek() == '"') {
            m.form = content_form::text;
            return read_string(m.content);
        }
        if (peek() == 'n') {
            m.form = content_form::null;
            return literal("null");
        }
        if (!eat('[')) return false;
        m.form = content_form::parts;
        ws();
        if (eat(']')) return true;
        while (true) {
            if (!read_part(m)) return false;
            ws();
            if (eat(',')) { ws(); continue; }
            return eat(']');
        }
    }

    /// {"type":"text","text":...} or {"type":"image_url","image_url":{"url":...[,"detail":...]}}, in that order.
    bool read_part(message& m) {
        std::string_view key;
        if (!eat('{')) return false;
        ws();
        if (!read_plain_key(key) || key != "type") return false;
        ws();
        if (!eat(':')) return false;
        ws();
        std::string type;
        if (!read_string(type)) return false;
        ws();
        if (!eat(',')) return false;
        ws();
        if (!read_plain_key(key)) return false;
        ws();
        if (!eat(':')) return false;
        ws();
        content_part p;
        if (type == "text" && key == "text") {
            p.type = content_part::kind::text;
            if (!read_string(p.text)) return false;
        } else if (type == "image_url" && key == "image_url") {
            p.type = content_part::kind::image_url;
            if (!eat('{')) return false;
            ws();
            if (!read_plain_key(key) || key != "url") return false;
            ws();
            if (!eat(':')) return false;
            ws();
            if (!read_string(p.url)) return false;
            ws();
            if (eat(',')) {
                ws();
                if (!read_plain_key(key) || key != "detail") return false;
                ws();
                if (!eat(':')) return false;
                ws();
                std::string d;
                if (!read_string(d)) return false;
                p.detail = std::move(d);
                ws();
            }
            if (!eat('}')) return false;
        } else {
            return false;
        }
        ws();
        if (!eat('}')) return false;
        m.parts.push_back(std::move(p));
        return true;
    }

    /// [{"id":...,"type":...,"function":{"name":...,"arguments":"..."}}, ...] with members in that order.
    bool read_tool_calls(message& m) {
        if (!eat('[')) return false;
        ws();
        if (eat(']')) return true;
        while (true) {
            tool_call c;
            std::string_view key;
            if (!eat('{')) return false;
            ws();
            if (!member(key, "id") || !read_string(c.id)) return false;
            ws();
            if (!eat(',')) return false;
            ws();
            if (!member(key, "type")) return false;
            c.type.clear();
            if (!read_string(c.type)) return false;
            ws();
            if (!eat(',')) return false;
            ws();
            if (!member(key, "function") || !eat('{')) return false;
            ws();
            if (!member(key, "name") || !read_string(c.name)) return false;
            ws();
            if (!eat(',')) return false;
            ws();
            if (!member(key, "arguments") || !read_string(c.arguments)) return false;
            ws();
            if (!eat('}')) return false;
            ws();
            if (!eat('}')) return false;
            m.tool_calls.push_back(std::move(c));
            ws();
            if (eat(',')) { ws(); continue; }
            return eat(']');
        }
    }

    bool member(std::string_view& key, std::string_view want) noexcept {
        if (!read_plain_key(key) || key != want) return false;
        ws();
        if (!eat(':')) return false;
        ws();
        return true;
    }

    std::string_view s_;
    std::size_t pos_ = 0;
};

} // namespace ania::detail
