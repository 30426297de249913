// ania/config/llm.hpp -- what every HTTP model client reads of `llm.*` and how `compressor.*` / `ocr.*` are laid
// over it, written once for any client options type of http::model_client's shape (base_url, api_key, model,
// stream, timeouts, retry, extra, on_text). config/clients.hpp and config/anthropic.hpp use it.
// SPDX-License-Identifier: MIT
#pragma once

#include <chrono>
#include <string>

#include <ania/config/config.hpp>
#include <ania/json.hpp>

namespace ania::detail {

/// `llm.*` into `o`: endpoint (an empty base_url keeps the options' default), key, model, stream, the timeouts,
/// max_retries and the extra request members.
template <class Options>
void read_llm(Options& o, const llm_config& l) {
    if (!l.base_url.empty()) o.base_url = l.base_url;
    o.api_key = l.api_key;
    o.model = l.model;
    o.stream = l.stream;
    o.timeouts.connect = std::chrono::milliseconds(l.connect_timeout_ms);
    o.timeouts.total = std::chrono::milliseconds(l.timeout_ms);
    o.timeouts.stall = std::chrono::milliseconds(l.stall_timeout_ms);
    o.retry.max_retries = static_cast<int>(l.max_retries);
    o.extra = to_json(l.extra);
}

/// Another endpoint's base_url, api_key and model laid over llm's options (an empty one keeps llm's): what
/// compressor.* and ocr.* configure. Never streamed to the user (a summary, an image description).
template <class Options>
[[nodiscard]] Options options_over(Options o, const std::string& base_url, const std::string& api_key, const std::string& model) {
    if (!base_url.empty()) o.base_url = base_url;
    if (!api_key.empty()) o.api_key = api_key;
    if (!model.empty()) o.model = model;
    o.on_text = {};
    return o;
}

} // namespace ania::detail
