// ania/openai/stream_chunk.hpp -- the common stream chunk read without building a JSON document.
// SPDX-License-Identifier: MIT
//
// Almost every chunk of a streamed answer is `{"id":…,"choices":[{"index":0,"delta":{"content":"…"},
// "finish_reason":null}],…}`: a few bytes of text in ~150 bytes of envelope. Building an nlohmann document
// for each (a dozen allocations) was 70% of stream_accumulator's time (bench sse_decode/accumulator). This
// reader validates the whole chunk as JSON while it looks for the three fields the accumulator takes from such
// a chunk, and declines (the accumulator then parses the chunk as before) on anything else: tool calls, usage,
// an error, invalid UTF-8, a \u escape in a key, duplicate keys it reads, a number it would have to convert,
// nesting deeper than it needs. So it never accepts what the full parser rejects, and never reads a chunk
// differently (tests/unit/clients.cpp compares both on random and mutated chunks).
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include <ania/detail/json_unescape.hpp>
#include <ania/json_fwd.hpp>  // parse_limits
#include <ania/text/utf8.hpp>

namespace ania::openai::detail {

class stream_chunk_reader {
public:
    /// What the chunk says, when read() returned true. The views point into the chunk or into this reader.
    struct fields {
        bool saw_choice = false;
        std::optional<std::string_view> content, reasoning, finish_reason;
    };

    /// True when `data` is a chunk this reader understands, filling `out`; false: use the full parser.
    [[nodiscard]] bool read(std::string_view data, const parse_limits& limits, fields& out) {
        if (data.size() > limits.max_bytes || !text::is_valid_utf8(data)) return false;
        s_ = data;
        i_ = 0;
        max_depth_ = limits.max_depth < 16 ? limits.max_depth : 16;
        content_buf_.clear();
        reasoning_buf_.clear();
        out = fields{};
        ws();
        if (!top(out)) return false;
        ws();
        return i_ == s_.size();
    }

private:
    // ---- the chunk's structure ------------------------------------------------------------------------

    bool top(fields& out) {
        if (!eat('{')) return false;
        bool choices = false;
        return members(1, [&](std::string_view key) {
            if (key == "choices") {
                if (choices) return false;
                choices = true;
                return choice_array(out);
            }
            if (key == "error" || key == "usage" || key == "x_groq") return null_value();  // else: the full parser
            return skip(2);
        });
    }
    bool choice_array(fields& out) {
        ws();
        if (max_depth_ < 2 || !eat('[')) return false;
        ws();
        if (eat(']')) return true;
        if (!choice(out)) return false;
        ws();
        return eat(']');  // more than one choice (n > 1): the full parser picks
    }
    bool choice(fields& out) {
        if (!eat('{')) return false;
        bool index = false, delta = false, finish = false;
        const bool ok = members(3, [&](std::string_view key) {
            if (key == "index") {
                if (index) return false;
                index = true;
                return peek('0') && (++i_, true) && (i_ == s_.size() || !is_digit_or_fraction(s_[i_]));  // index 0 only
            }
            if (key == "delta") {
                if (delta) return false;
                delta = true;
                return delta_object(out);
            }
            if (key == "finish_reason") {
                if (finish) return false;
                finish = true;
                if (null_value()) return true;
                std::string_view v;
                if (!string_value(v, nullptr)) return false;
                if (v == "error") return false;  // the full parser fails the stream
                out.finish_reason = v;
                return true;
            }
            if (key == "usage") return null_value();
            return skip(4);
        });
        out.saw_choice = ok;
        return ok;
    }
    bool delta_object(fields& out) {
        ws();
        if (!eat('{')) return false;
        bool content = false, reasoning = false;
        return members(4, [&](std::string_view key) {
            if (key == "content") return text_member(content, out.content, content_buf_);
            if (key == "reasoning_content") return text_member(reasoning, out.reasoning, reasoning_buf_);
            if (key == "tool_calls") return null_value();  // calls: the full parser assembles them
            return skip(5);
        });
    }

    /// A delta's text member: null, or a string (decoded into `buf` when it has escapes); a second one declines.
    bool text_member(bool& seen, std::optional<std::string_view>& out, std::string& buf) {
        if (seen) return false;
        seen = true;
        if (null_value()) return true;
        std::string_view v;
        if (!string_value(v, &buf)) return false;
        out = v;
        return true;
    }

    /// `{` already eaten: key, value, ... `}`; `on_key(key)` reads the value.
    template <class OnKey>
    bool members(std::size_t depth, OnKey&& on_key) {
        if (depth > max_depth_) return false;
        ws();
        if (eat('}')) return true;
        while (true) {
            ws();
            std::string_view key;
            if (!string_value(key, nullptr, /*key=*/true)) return false;
            ws();
            if (!eat(':')) return false;
            ws();
            if (!on_key(key)) return false;
            ws();
            if (eat(',')) continue;
            return eat('}');
        }
    }

    // ---- JSON values, validated -----------------------------------------------------------------------------

    bool null_value() {
        if (s_.compare(i_, 4, "null") != 0) return false;
        i_ += 4;
        return true;
    }
    /// Any value, validated and skipped; `depth` is its nesting depth if it is an object or an array.
    bool skip(std::size_t depth) {
        if (i_ >= s_.size()) return false;
        const char c = s_[i_];
        if (c == '"') {
            std::string_view v;
            return string_value(v, nullptr);
        }
        if (c == '{') {
            ++i_;
            return members(depth + 1, [&](std::string_view) { return skip(depth + 1); });
        }
        if (c == '[') {
            if (depth > max_depth_) return false;
            ++i_;
            ws();
            if (eat(']')) return true;
            while (true) {
                ws();
                if (!skip(depth + 1)) return false;
                ws();
                if (eat(',')) continue;
                return eat(']');
            }
        }
        if (c == 't') return literal("true");
        if (c == 'f') return literal("false");
        if (c == 'n') return literal("null");
        return number();
    }
    bool literal(std::string_view w) {
        if (s_.compare(i_, w.size(), w) != 0) return false;
        i_ += w.size();
        return true;
    }
    /// An integer of at most 18 digits or a plain decimal; an exponent or a longer number: the full parser (it
    /// may have to reject it as out of range).
    bool number() {
        const std::size_t b = i_;
        if (peek('-')) ++i_;
        if (peek('0')) {
            ++i_;
        } else if (i_ < s_.size() && s_[i_] >= '1' && s_[i_] <= '9') {
            while (i_ < s_.size() && s_[i_] >= '0' && s_[i_] <= '9') ++i_;
        } else {
            return false;
        }
        if (peek('.')) {
            ++i_;
            const std::size_t f = i_;
            while (i_ < s_.size() && s_[i_] >= '0' && s_[i_] <= '9') ++i_;
            if (i_ == f) return false;
        }
        if (i_ < s_.size() && (s_[i_] == 'e' || s_[i_] == 'E')) return false;
        return i_ - b <= 18;
    }
    /// A string. Without escapes, a view into the chunk; with escapes, decoded into `buf` (null: only
    /// validated) as nlohmann decodes them; a key with an escape declines.
    bool string_value(std::string_view& out, std::string* buf, bool key = false) {
        if (!eat('"')) return false;
        const std::size_t b = i_;
        while (i_ < s_.size()) {
            const auto c = static_cast<unsigned char>(s_[i_]);
            if (c == '"') {
                out = s_.substr(b, i_ - b);
                ++i_;
                return true;
            }
            if (c < 0x20) return false;
            if (c == '\\') break;
            ++i_;
        }
        if (i_ >= s_.size() || key) return false;
        // Escapes: decode from the start of the string.
        std::string local;
        std::string& o = buf ? *buf : local;
        o.assign(s_.substr(b, i_ - b));
        while (i_ < s_.size()) {
            const auto c = static_cast<unsigned char>(s_[i_]);
            if (c == '"') {
                ++i_;
                out = o;
                return true;
            }
            if (c < 0x20) return false;
            if (c != '\\') {
                o.push_back(static_cast<char>(c));
                ++i_;
                continue;
            }
            ++i_;
            if (!ania::detail::decode_json_escape(s_, i_, o)) return false;
        }
        return false;
    }
    void ws() noexcept {
        while (i_ < s_.size() && (s_[i_] == ' ' || s_[i_] == '\n' || s_[i_] == '\r' || s_[i_] == '\t')) ++i_;
    }
    bool eat(char c) noexcept {
        if (i_ < s_.size() && s_[i_] == c) {
            ++i_;
            return true;
        }
        return false;
    }
    [[nodiscard]] bool peek(char c) const noexcept { return i_ < s_.size() && s_[i_] == c; }
    [[nodiscard]] static bool is_digit_or_fraction(char c) noexcept { return (c >= '0' && c <= '9') || c == '.' || c == 'e' || c == 'E'; }

    std::string_view s_;
    std::size_t i_ = 0;
    std::size_t max_depth_ = 16;
    std::string content_buf_, reasoning_buf_;
};

} // namespace ania::openai::detail
