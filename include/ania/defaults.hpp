// ania/defaults.hpp -- every default of the spec's configuration, written once.
// SPDX-License-Identifier: MIT
//
// config.hpp (what a configuration file leaves out) and the options structs of the parts (what a caller who
// builds one by hand gets) both take their defaults from here, so the two cannot drift apart.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string_view>

namespace ania::defaults {

// SPEC §1: the context window.
inline constexpr std::int64_t max_context_tokens = 128000;  ///< <= 0 disables compression
inline constexpr double compress_ratio = 0.8;               ///< compress once the context exceeds ratio x max

// SPEC §3: sessions (0 disables a limit).
inline constexpr std::int64_t session_max_idle_minutes = 120;
inline constexpr std::int64_t session_max_sessions = 128;
inline constexpr std::int64_t session_group_auto_clear = 30;

// SPEC §4: long-term memory.
inline constexpr std::int64_t memory_max_entries = 200;         ///< per scope
inline constexpr std::int64_t memory_max_content_runes = 2000;  ///< one entry's content
inline constexpr std::int64_t memory_inject_entries = 3;
inline constexpr std::int64_t memory_inject_runes = 1500;
inline constexpr std::int64_t memory_max_user_id_runes = 128;
inline constexpr std::int64_t memory_max_tags = 16;
inline constexpr std::int64_t memory_max_tag_runes = 64;
inline constexpr std::int64_t memory_max_query_runes = 2000;
inline constexpr std::int64_t memory_versions_kept = 20;  ///< per entry: the oldest versions beyond are dropped

// SPEC §5: the fallback vision model (the original's: SiliconFlow's Qwen3-VL).
inline constexpr std::string_view ocr_base_url = "https://api.siliconflow.cn/v1";
inline constexpr std::string_view ocr_model = "Qwen/Qwen3-VL-32B-Instruct";

// The operator's console (<ania/admin/console.hpp>): loopback only unless configured otherwise.
inline constexpr std::string_view admin_listen = "127.0.0.1:8700";
inline constexpr std::size_t admin_max_body = 256 * 1024;      ///< bytes of a request body; larger: 413
// A page's load is a dozen requests; a script that loops on the API (or guesses tokens) gets 429 past these.
inline constexpr double admin_requests_per_second = 200;       ///< per remote address, sustained
inline constexpr double admin_burst = 1000;                    ///< per remote address, at once
inline constexpr std::size_t admin_turns_kept = 200;           ///< per session, for the context-size chart
inline constexpr std::size_t admin_page_limit = 200;           ///< stored messages per page, at most

} // namespace ania::defaults
