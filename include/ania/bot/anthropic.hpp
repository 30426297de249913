// ania/bot/anthropic.hpp -- how a bot builds anthropic::client from the configuration: the main model
// (`llm.*`, base_url defaulting to Anthropic's) and the compression model (`compressor.*` when compressor.model
// is set, SPEC §1). Claude models read images: with `multimodal` they get them; `ocr.*` (an OpenAI-compatible
// vision model) is not used by this client (said once in the log), images then become markers.
//     ania::basic_bot<ania::bot_traits<ania::anthropic::client, ania::sqlite_store>> bot(cfg, {.database = "bot.db"});
// Needs dependency('ania-openai') (libcurl).
// SPDX-License-Identifier: MIT
#pragma once

#include <optional>
#include <utility>

#include <ania/bot/bot.hpp>
#include <ania/config/anthropic.hpp>
#include <ania/log.hpp>

namespace ania {

template <>
struct bot_clients<anthropic::client> {
    [[nodiscard]] static anthropic::client main(const config& c, const log_sink& log) {
        anthropic::client_options o = from_config<anthropic::client_options>(c);
        o.log = log;
        return anthropic::client(std::move(o));
    }
    [[nodiscard]] static std::optional<anthropic::client> compression(const config& c, const log_sink& log) {
        if (c.compressor.model.empty()) return std::nullopt;  // the main model summarises
        anthropic::client_options o = from_config<anthropic::client_options>(c, model_role::compression);
        o.log = log;
        return anthropic::client(std::move(o));
    }
    [[nodiscard]] static std::optional<anthropic::client> vision(const config& c, const log_sink& log) {
        if (!c.multimodal && !c.ocr.api_key.empty())
            log_to(log, log_level::warn, "ocr.* is an OpenAI-compatible vision model, not used by an Anthropic bot: "
                                         "Claude reads images itself (set multimodal); images become markers");
        return std::nullopt;
    }
};

} // namespace ania
