// ania/config/clients.hpp -- the model clients' options from the configuration: `llm.*` for the main model,
// `compressor.*` for the compression model (SPEC §1), `ocr.*` for the vision model (SPEC §5).
//     ania::openai::client llm(ania::from_config<ania::openai::client_options>(cfg));
//     ania::openai::client cheap(ania::from_config<ania::openai::client_options>(cfg, ania::model_role::compression));
// Needs libcurl: `dependency('ania-openai')`.
// SPDX-License-Identifier: MIT
#pragma once

#include <ania/config/from_config.hpp>
#include <ania/config/llm.hpp>
#include <ania/json.hpp>
#include <ania/openai/client.hpp>

namespace ania {

/// `llm.*`: endpoint, key, model, stream, the timeouts, max_retries and the extra request members.
template <>
[[nodiscard]] inline openai::client_options from_config<openai::client_options>(const config& c) {
    openai::client_options o;
    detail::read_llm(o, c.llm);
    o.messages.include_reasoning = c.llm.replay_reasoning;
    return o;
}

/// The client of a model role: main = `llm.*`; compression = `compressor.*` when compressor.model is set, else
/// llm's own; vision = `ocr.*` laid over llm's (never llm's key: a key is not sent to another provider; never
/// streamed).
template <>
[[nodiscard]] inline openai::client_options from_config<openai::client_options>(const config& c, model_role role) {
    const openai::client_options llm = from_config<openai::client_options>(c);
    switch (role) {
    case model_role::main:
        return llm;
    case model_role::compression:
        if (c.compressor.model.empty()) return detail::options_over(llm, {}, {}, {});
        return detail::options_over(llm, c.compressor.base_url, c.compressor.api_key, c.compressor.model);
    case model_role::vision: {
        openai::client_options o = detail::options_over(llm, c.ocr.base_url, {}, c.ocr.model);
        o.api_key = c.ocr.api_key;
        o.stream = false;
        return o;
    }
    }
    return llm;
}

} // namespace ania
