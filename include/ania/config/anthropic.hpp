// ania/config/anthropic.hpp -- anthropic::client_options from the configuration: `llm.*` for the main model
// (base_url defaults to https://api.anthropic.com/v1), `compressor.*` for the compression model (SPEC §1).
// `ocr.*` names an OpenAI-compatible vision model: with a Claude main model, set `multimodal` instead.
// Needs libcurl: `dependency('ania-openai')`.
// SPDX-License-Identifier: MIT
#pragma once

#include <utility>

#include <ania/anthropic/client.hpp>
#include <ania/config/from_config.hpp>
#include <ania/config/llm.hpp>

namespace ania {

/// The client of a model role over the Messages API: main = `llm.*`; compression = `compressor.*` laid over
/// llm's when compressor.model is set (an empty base_url or api_key keeps llm's), else llm's own; vision is
/// not a role an Anthropic client takes from `ocr.*` (an error: ocr is OpenAI-compatible).
template <>
[[nodiscard]] inline anthropic::client_options from_config<anthropic::client_options>(const config& c, model_role role) {
    anthropic::client_options o;
    detail::read_llm(o, c.llm);
    switch (role) {
    case model_role::main:
        break;
    case model_role::compression:
        if (c.compressor.model.empty()) return detail::options_over(std::move(o), {}, {}, {});
        return detail::options_over(std::move(o), c.compressor.base_url, c.compressor.api_key, c.compressor.model);
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
