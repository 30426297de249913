// ania/json_fwd.hpp -- the name of ania's JSON value type and the options of reading and writing it, without
// nlohmann_json's definitions: what a header needs to declare a function that takes or returns JSON, or to
// hold JSON options. <ania/json.hpp> is the whole JSON API.
// SPDX-License-Identifier: MIT
#pragma once

#include <cstddef>
#include <cstdint>

#include <nlohmann/json_fwd.hpp>

namespace ania {

/// The JSON value type of ania's wire format: nlohmann's, with object members kept in insertion order.
using json = nlohmann::ordered_json;

/// Limits enforced while parsing untrusted JSON text (LLM replies, stored rows, configuration).
/// nlohmann parses 100,000 levels of nesting but overflows the stack when copying or dumping them,
/// so depth is checked before nlohmann sees the text.
struct parse_limits {
    std::size_t max_bytes = std::size_t{64} << 20;  ///< whole document; default 64 MiB (data-URI images are big)
    std::size_t max_depth = 64;                     ///< arrays + objects nested in each other
};

/// How messages are written. The defaults write back what was read.
struct write_options {
    /// What an assistant message that calls tools and has no text carries as `content`. Providers disagree:
    /// OpenAI accepts null, some OpenAI-compatible servers want "" and a few reject the key.
    enum class tool_call_content : std::uint8_t { keep, null, empty_string, omit };
    tool_call_content empty_tool_call_content = tool_call_content::keep;
    /// DeepSeek rejects requests that send `reasoning_content` back; false leaves it out.
    bool include_reasoning = true;
};

} // namespace ania
