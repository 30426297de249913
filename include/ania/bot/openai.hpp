// ania/bot/openai.hpp -- how a bot builds openai::client from the configuration: the main model (`llm.*`),
// the compression model (`compressor.*` when compressor.model is set, SPEC §1), the vision model (`ocr.*`
// when the main model is not multimodal and ocr.api_key is set, SPEC §5). Needs dependency('ania-openai').
// SPDX-License-Identifier: MIT
#pragma once

#include <optional>

#include <ania/bot/bot.hpp>
#include <ania/config/clients.hpp>
#include <ania/log.hpp>
#include <ania/openai/client.hpp>

namespace ania {

template <>
struct bot_clients<openai::client> {
    [[nodiscard]] static openai::client main(const config& c, const log_sink& log) {
        openai::client_options o = from_config<openai::client_options>(c);
        o.log = log;
        return openai::client(std::move(o));
    }
    [[nodiscard]] static std::optional<openai::client> compression(const config& c, const log_sink& log) {
        if (c.compressor.model.empty()) return std::nullopt;  // the main model summarises
        openai::client_options o = from_config<openai::client_options>(c, model_role::compression);
        o.log = log;
        return openai::client(std::move(o));
    }
    [[nodiscard]] static std::optional<openai::client> vision(const config& c, const log_sink& log) {
        if (c.multimodal || c.ocr.api_key.empty()) return std::nullopt;
        openai::client_options o = from_config<openai::client_options>(c, model_role::vision);
        o.log = log;
        return openai::client(std::move(o));
    }
};

} // namespace ania
