// ania/config/anthropic.hpp -- anthropic::client_options from the configuration: `llm.*` for the main model
// (base_url defaults to https://api.anthropic.com/v1), `compressor.*` for the compression model (SPEC §1).
// `ocr.*` names an OpenAI-compatible vision model: with a Claude main model, set `multimodal` instead.
// Needs libcurl: `dependency('ania-openai')`.
// SPDX-License-Identifier: MIT
#pragma once

#include <chrono>

#include <ania/anthropic/client.hpp>
#include <ania/config/from_config.hpp>
#include <ania/json.hpp>

namespace ania {

/// The client of a model role over the Messages API: main = `llm.*`; compression = `compressor.*` laid over
/// llm's when compressor.model is set (an empty base_url or api_key keeps llm's), else llm's own; vision is
/// not a role an Anthropic client takes from `ocr.*` (an error: ocr is OpenAI-compatible).
template <>
[[nodiscard]] inline anthropic::client_options from_config<anthropic::client_options>(const config& c, model_role role) {
    anthropic::client_options o;
    if (!c.llm.base_url.empty()) o.base_url = c.llm.base_url;
    o.api_key = c.llm.api_key;
    o.model = c.llm.model;
    o.stream = c.llm.stream;
    o.timeouts.connect = std::chrono::milliseconds(c.llm.connect_timeout_ms);
    o.timeouts.total = std::chrono::milliseconds(c.llm.timeout_ms);
    o.timeouts.stall = std::chrono::milliseconds(c.llm.stall_timeout_ms);
    o.retry.max_retries = static_cast<int>(c.llm.max_retries);
    o.extra = to_json(c.llm.extra);
    switch (role) {
    case model_role::main:
        break;
    case model_role::compression:
        o.on_text = {};  // a summary is not streamed to the user
        if (c.compressor.model.empty()) break;
        if (!c.compressor.base_url.empty()) o.base_url = c.compressor.base_url;
        if (!c.compressor.api_key.empty()) o.api_key = c.compressor.api_key;
        o.model = c.compressor.model;
        break;
    case model_role::vision:
        throw error(errc::invalid_config, "ocr: an Anthropic client is not built from ocr.* (an OpenAI-compatible "
                                          "vision model); Claude reads images itself: set multimodal");
    }
    return o;
}

/// `llm.*`.
template <>
[[nodiscard]] inline anthropic::client_options from_config<anthropic::client_options>(const config& c) {
    return from_config<anthropic::client_options>(c, model_role::main);
}

} // namespace ania
