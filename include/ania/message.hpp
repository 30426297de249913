// ania/message.hpp -- the OpenAI chat-completions message model: roles, content parts, tool calls.
// SPDX-License-Identifier: MIT
#pragma once

#include <concepts>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <ania/error.hpp>
#include <ania/text/utf8.hpp>

namespace ania {

/// Members of a JSON object that ania does not model (what a provider added: `{"x_cache":true}`), kept as
/// compact JSON text in wire order, so that a parsed message is written back byte for byte. Empty: none.
/// The message model parses no JSON; <ania/json.hpp> converts: `to_json(members)`, `members_from(object)`.
class json_members {
public:
    json_members() noexcept = default;
    json_members(const json_members& o) : text_(o.text_ ? std::make_unique<std::string>(*o.text_) : nullptr) {}
    json_members(json_members&&) noexcept = default;
    json_members& operator=(const json_members& o) {
        if (this != &o) text_ = o.text_ ? std::make_unique<std::string>(*o.text_) : nullptr;
        return *this;
    }
    json_members& operator=(json_members&&) noexcept = default;
    ~json_members() = default;

    /// The members of a JSON object value (ania::json): what lets `tool{"name", "...", json{{"type", "object"}},
    /// handler}` compile where <ania/json.hpp> is not included. Throws ania::error (invalid_argument) when the
    /// value is not an object. (A template over nlohmann's interface, so that this header needs none of it.)
    template <class Json>
        requires requires(const Json& j) {
            { j.is_object() } -> std::same_as<bool>;
            { j.type_name() } -> std::convertible_to<const char*>;
            typename Json::error_handler_t;
        }
    json_members(const Json& object) {  // NOLINT(google-explicit-constructor): a json converts, as it always did
        if (!object.is_object())
            throw error(errc::invalid_argument, std::string("json_members: expected an object, got ") + object.type_name());
        if (!object.empty()) text_ = std::make_unique<std::string>(object.dump(-1, ' ', false, Json::error_handler_t::replace));
    }

    [[nodiscard]] bool empty() const noexcept { return !text_; }
    /// The members as the text of a JSON object, or "" when there are none.
    [[nodiscard]] std::string_view text() const noexcept { return text_ ? std::string_view(*text_) : std::string_view(); }
    friend bool operator==(const json_members& a, const json_members& b) noexcept { return a.text() == b.text(); }

private:
    // One pointer (none: null): most messages carry no extras, and a message is copied and scanned in bulk.
    std::unique_ptr<std::string> text_;
};

/// Who speaks. `developer` is OpenAI's newer name for system-level instructions.
enum class role : std::uint8_t { system, developer, user, assistant, tool };

[[nodiscard]] constexpr std::string_view to_string(role r) noexcept {
    switch (r) {
    case role::system: return "system";
    case role::developer: return "developer";
    case role::user: return "user";
    case role::assistant: return "assistant";
    case role::tool: return "tool";
    }
    return "user";
}

/// The role named `s` on the wire, or nullopt for anything else (including "function", which ania drops).
[[nodiscard]] constexpr std::optional<role> role_from_string(std::string_view s) noexcept {
    if (s == "system") return role::system;
    if (s == "developer") return role::developer;
    if (s == "user") return role::user;
    if (s == "assistant") return role::assistant;
    if (s == "tool") return role::tool;
    return std::nullopt;
}

/// One element of an array `content`: text, an image, or a part type ania does not model (kept verbatim).
struct content_part {
    enum class kind : std::uint8_t { text, image_url, other };

    kind type = kind::text;
    std::string text;                   ///< kind::text
    std::string url;                    ///< kind::image_url: http(s) URL or data URI
    std::optional<std::string> detail;  ///< kind::image_url: "auto" / "low" / "high"
    json_members extra;        ///< members not modelled (kind::other: the whole part object)
    json_members image_extra;  ///< members of `image_url` besides url/detail

    [[nodiscard]] static content_part make_text(std::string t) {
        content_part p;
        p.type = kind::text;
        text::repair_utf8_in_place(t);
        p.text = std::move(t);
        return p;
    }
    [[nodiscard]] static content_part make_image(std::string image_url, std::optional<std::string> d = std::nullopt) {
        content_part p;
        p.type = kind::image_url;
        text::repair_utf8_in_place(image_url);
        p.url = std::move(image_url);
        p.detail = std::move(d);
        return p;
    }

    friend bool operator==(const content_part&, const content_part&) = default;
};

/// An assistant's request to call a function. `arguments` is the JSON text exactly as the model produced it
/// (it may be invalid JSON: the tool reports that to the model, ania does not rewrite it).
struct tool_call {
    std::string id;
    std::string type = "function";
    std::string name;       ///< function.name
    std::string arguments;  ///< function.arguments
    json_members extra;           ///< members of the call besides id/type/function
    json_members function_extra;  ///< members of `function` besides name/arguments

    friend bool operator==(const tool_call&, const tool_call&) = default;
};

/// How `content` appeared on the wire, so that a parsed message is written back the same way.
enum class content_form : std::uint8_t {
    text,    ///< a string (`content` member)
    parts,   ///< an array (`parts` member)
    null,    ///< JSON null (assistant messages that only call tools)
    absent,  ///< no `content` key at all
};

/// One chat-completions message. Plain value type: copyable, movable, comparable.
struct message {
    ania::role role = role::user;
    content_form form = content_form::text;
    std::string content;               ///< the text when form == text
    std::vector<content_part> parts;   ///< the parts when form == parts
    std::vector<tool_call> tool_calls; ///< assistant only
    std::optional<std::string> tool_call_id;       ///< tool only: the call this answers
    std::optional<std::string> name;               ///< optional participant / function name
    std::optional<std::string> reasoning_content;  ///< DeepSeek-style reasoning text
    json_members extra;  ///< members not modelled, in wire order

    /// Member order as parsed (4 bits a member, see detail::wire_field); 0 for messages built in code.
    /// Not part of equality.
    std::uint32_t wire_order = 0;

    [[nodiscard]] static message make(ania::role r, std::string text) {
        message m;
        m.role = r;
        text::repair_utf8_in_place(text);
        m.content = std::move(text);
        return m;
    }
    [[nodiscard]] static message system(std::string text) { return make(role::system, std::move(text)); }
    [[nodiscard]] static message developer(std::string text) { return make(role::developer, std::move(text)); }
    [[nodiscard]] static message user(std::string text) { return make(role::user, std::move(text)); }
    [[nodiscard]] static message assistant(std::string text) { return make(role::assistant, std::move(text)); }
    /// A user message made of parts (text and images).
    [[nodiscard]] static message user(std::vector<content_part> ps) {
        message m;
        m.role = role::user;
        m.form = content_form::parts;
        m.parts = std::move(ps);
        return m;
    }
    /// An assistant message that only calls tools (`content: null` on the wire).
    [[nodiscard]] static message assistant_calls(std::vector<tool_call> calls) {
        message m;
        m.role = role::assistant;
        m.form = content_form::null;
        m.tool_calls = std::move(calls);
        return m;
    }
    /// The result of tool call `call_id`.
    [[nodiscard]] static message tool_result(std::string call_id, std::string text) {
        message m = make(role::tool, std::move(text));
        text::repair_utf8_in_place(call_id);
        m.tool_call_id = std::move(call_id);
        return m;
    }

    [[nodiscard]] bool has_tool_calls() const noexcept { return !tool_calls.empty(); }
    [[nodiscard]] bool is_tool_result() const noexcept { return role == role::tool; }
    /// True when there is no text and no part at all (null, absent, "" or an empty array).
    [[nodiscard]] bool content_empty() const noexcept {
        switch (form) {
        case content_form::text: return content.empty();
        case content_form::parts: return parts.empty();
        default: return true;
        }
    }
    /// The readable text: `content`, or the text parts joined by '\n' (images and other parts skipped).
    [[nodiscard]] std::string text() const {
        if (form == content_form::text) return content;
        std::string out;
        if (form != content_form::parts) return out;
        for (const content_part& p : parts) {
            if (p.type != content_part::kind::text) continue;
            if (!out.empty()) out.push_back('\n');
            out += p.text;
        }
        return out;
    }

    friend bool operator==(const message& a, const message& b) {
        return a.role == b.role && a.form == b.form && a.content == b.content && a.parts == b.parts &&
               a.tool_calls == b.tool_calls && a.tool_call_id == b.tool_call_id && a.name == b.name &&
               a.reasoning_content == b.reasoning_content && a.extra == b.extra;
    }
};

} // namespace ania
