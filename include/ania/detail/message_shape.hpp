// ania/detail/message_shape.hpp -- the shape rules of a message on the wire, shared by both readers (the
// nlohmann-based reader in json.hpp and detail/fast_message_parser.hpp), so that they cannot disagree.
// SPDX-License-Identifier: MIT
#pragma once

#include <cstdint>
#include <string_view>

#include <ania/message.hpp>

namespace ania::detail {

/// Member ids recorded in message::wire_order (4 bits each, first member in the lowest bits).
enum class wire_field : std::uint8_t { none, role, content, name, tool_calls, tool_call_id, reasoning, extras };

/// The member a key names: one of those ania models, or `extras` for any other key.
[[nodiscard]] constexpr wire_field member_field(std::string_view key) noexcept {
    if (key == "role") return wire_field::role;
    if (key == "content") return wire_field::content;
    if (key == "name") return wire_field::name;
    if (key == "tool_calls") return wire_field::tool_calls;
    if (key == "tool_call_id") return wire_field::tool_call_id;
    if (key == "reasoning_content") return wire_field::reasoning;
    return wire_field::extras;
}

/// Records the order in which members appeared: the first eight, 4 bits each.
struct wire_order_recorder {
    std::uint32_t order = 0;
    int slots = 0;
    void record(wire_field f) noexcept {
        if (slots < 8) order |= static_cast<std::uint32_t>(f) << (4 * slots++);
    }
};

/// The rules a whole message must meet once its members are read; nullptr when it meets them, else what is
/// wrong and where (member name). `has_role`: a role member was present.
struct shape_violation {
    std::string_view member;
    std::string_view what;
};
inline constexpr shape_violation missing_role{"role", "missing"};
inline constexpr shape_violation tool_without_id{"tool_call_id", "a tool message needs a non-empty tool_call_id"};
[[nodiscard]] inline const shape_violation* check_message_shape(const message& m, bool has_role) noexcept {
    if (!has_role) return &missing_role;
    if (m.role == role::tool && (!m.tool_call_id || m.tool_call_id->empty())) return &tool_without_id;
    return nullptr;
}

} // namespace ania::detail
