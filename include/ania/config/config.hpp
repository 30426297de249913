// ania/config/config.hpp -- the spec's configuration keys with the spec's defaults, and their checks. A leaf: no
// option header includes it and it includes none of them. Loading from JSON is in <ania/config/io.hpp> (the Hana
// reflection); the bridge to the parts' options is from_config, in <ania/config/from_config.hpp> and beside it.
// <ania/config.hpp> includes the three.
// SPDX-License-Identifier: MIT
#pragma once

#include <cmath>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

#include <ania/defaults.hpp>
#include <ania/detail/linkage.hpp>
#include <ania/error.hpp>
#include <ania/json_fwd.hpp>
#include <ania/message.hpp>  // json_members

namespace ania {

/// `llm.*`: the main model, an OpenAI-compatible chat-completions endpoint. Read by
/// `from_config<openai::client_options>` (<ania/config/clients.hpp>); compressor.* and ocr.* fall back to it.
struct llm_config {
    std::string base_url;   ///< empty: https://api.openai.com/v1
    std::string api_key;
    std::string model;
    bool stream = false;    ///< SSE
    std::int64_t connect_timeout_ms = 10'000;
    std::int64_t timeout_ms = 600'000;        ///< the whole call
    std::int64_t stall_timeout_ms = 60'000;   ///< no byte for this long mid-answer; 0 disables
    std::int64_t max_retries = 2;             ///< on 429 / 5xx / connection errors; never on other 4xx
    bool replay_reasoning = true;             ///< send reasoning_content back (DeepSeek's reasoner rejects it: false)
    /// Request members as they are: {"temperature": 0.7, "tool_choice": "auto"} (JSON text; to_json(extra) in
    /// <ania/json.hpp> gives the object).
    json_members extra;
};

/// `compressor.*`: the cheaper OpenAI-compatible model that writes summaries; an empty model means none is
/// configured and the main model is reused (SPEC §1). basic_bot builds the compression client from it
/// (from_config<openai::client_options>(cfg, model_role::compression)); with basic_agent alone, pass that client as parts::compression_client.
struct compressor_config {
    std::string base_url;
    std::string api_key;
    std::string model;
    /// `compressor.clear_tool_results.*`: the cheap rung before the summary (clear_tool_results_options in
    /// <ania/compressor/clear_tool_results.hpp>): old tool results replaced by a placeholder, no model call.
    /// Keep up to this many earlier summaries at the head of the history byte for byte and summarise only
    /// what follows them (a sticky cut for providers' prompt caches; summary_options::stack_summaries). 0 = off.
    std::int64_t stack_summaries = 0;
    struct clear_tool_results_config {
        bool enabled = false;
        std::int64_t trigger = 0;          ///< context tokens at which it starts; 0 = when compression is due
        std::int64_t keep = 3;             ///< the newest results kept
        std::vector<std::string> exclude;  ///< tool names never cleared
        std::int64_t clear_at_least = 0;   ///< tokens; clear nothing unless this many go
        bool clear_arguments = false;      ///< the cleared calls' arguments become {}
        std::string placeholder = "[tool result cleared to save context]";
    } clear_tool_results;
    /// `compressor.verify.*`: a summary that fails a check is rejected and truncation runs (summary_options in
    /// <ania/compressor/llm_summary.hpp>); the breaker skips the summary after repeated failures.
    struct verify_config {
        double max_ratio = 0;         ///< reject a summary over this share of its transcript's tokens; 0 = off
        bool reject_refusals = false;  ///< reject a summary that opens like a refusal (default_refusal_prefixes)
        bool same_script = false;      ///< reject a summary in another script (CJK / Latin) than its transcript
        std::int64_t breaker_failures = 0;         ///< open the breaker after this many failures in a row; 0 = none
        std::int64_t breaker_cool_down_seconds = 60;
    } verify;
};

/// `postgres.*`: the shared database of several processes. Read by `from_config<postgres_options>`
/// (<ania/config/postgres.hpp>).
struct postgres_config {
    std::string dsn;  ///< a libpq connection string or URI (TLS: sslmode=...); empty: the PG* environment variables
    std::int64_t pool_size = 4;
    std::int64_t statement_timeout_ms = 30'000;  ///< 0: the server's
    bool transaction_pooling = false;  ///< behind PgBouncer in transaction mode: no session state (see postgres_options)
};

/// `session.*` (SPEC §3). 0 disables a limit. Read by `from_config<session_options>`.
struct session_config {
    std::int64_t max_idle_minutes = defaults::session_max_idle_minutes;  ///< idle eviction
    std::int64_t max_sessions = defaults::session_max_sessions;     ///< LRU cap on resident sessions
    std::int64_t group_auto_clear = defaults::session_group_auto_clear;  ///< consecutive group messages not addressed to the bot
};

/// `history.*`: what is kept of a conversation beyond its window.
struct history_config {
    /// `history.archive.*`: non-destructive compaction (archiving_store, <ania/history/archive.hpp>): what a
    /// summary or a cut removes is archived, and the model gets history_search / history_get (basic_bot).
    struct archive_config {
        bool enabled = false;
        std::int64_t max_messages = 10'000;    ///< per session; the oldest go first (0: no limit)
        std::int64_t max_bytes = 16 << 20;     ///< per session, of archived_bytes() (0: no limit)
        bool keep_on_clear = false;            ///< a clear (and the group auto-clear) keeps the archive
    } archive;
};

/// `memory.*` (SPEC §4).
struct memory_config {
    std::int64_t max_entries = defaults::memory_max_entries;      ///< per scope; then memory_save answers "memory full"
    std::int64_t max_content_runes = defaults::memory_max_content_runes; ///< one entry's content is cut to this many code points
    /// Prepend relevant memories of the session's scope to the user message, for that request only: basic_bot
    /// does; with basic_agent alone, set agent_options::auto_inject to memory::inject_block (the quickstart does).
    bool auto_inject = false;
    std::int64_t inject_entries = defaults::memory_inject_entries;     ///< the auto-inject block holds at most this many entries
    std::int64_t inject_runes = defaults::memory_inject_runes;     ///< ... and about this many runes
    /// The near-duplicate threshold; absent (null): the similarity policy's own, 0.55 for the spec's Dice.
    std::optional<double> near_duplicate_threshold;
    /// Exact duplicates: false = white space folded only (the spec); true = also full-width forms and case.
    bool fold_case_and_width = false;
    std::int64_t max_user_id_runes = defaults::memory_max_user_id_runes;  ///< a longer user_id is cut
    std::int64_t max_tags = defaults::memory_max_tags;          ///< tags past this many are dropped
    std::int64_t max_tag_runes = defaults::memory_max_tag_runes;      ///< a longer tag is cut
    /// Versions kept per entry (who changed it, when, through which tool call, what it said): the oldest
    /// beyond are dropped; 0 records none.
    std::int64_t versions_kept = defaults::memory_versions_kept;
};

/// `ocr.*` (SPEC §5): the fallback vision model when the main one is not multimodal. The original's
/// default is SiliconFlow's Qwen3-VL; the key must still be given. basic_bot builds the vision client from it
/// when `multimodal` is false and api_key is set (model_role::vision); else images become markers.
struct ocr_config {
    std::string base_url{defaults::ocr_base_url};
    std::string api_key;
    std::string model{defaults::ocr_model};
};

/// `admin.*`: the operator's console (<ania/admin/console.hpp>, the ania-admin dependency). A bot starts it
/// when `enabled`. It never runs without a token: `token`, else the first line of `token_file` (a file keeps
/// the secret out of the configuration); with neither, enabling it is a configuration error.
struct admin_config {
    bool enabled = false;
    std::string listen{defaults::admin_listen};  ///< host:port; a host other than loopback exposes the console
    std::string token;
    std::string token_file;
    /// API requests worked on at once, the others wait (0: one less than the cores, at least one; at most 1024).
    std::int64_t busy_threads = 0;
    double requests_per_second = defaults::admin_requests_per_second;  ///< per remote address, sustained; 0: no limit
    double burst = defaults::admin_burst;                              ///< per remote address, at once
};

/// Every configuration key of SPEC.md with its default. Load with `load_config` / `parse_config`.
struct config {
    std::int64_t max_context_tokens = defaults::max_context_tokens; ///< <= 0 disables compression
    double compress_ratio = defaults::compress_ratio;             ///< compress once the context exceeds ratio x max_context_tokens
    /// Keep each committed message's request bytes once written, so a request costs O(turn) and not the whole
    /// history again (window_options::wire_cache, <ania/wire_cache.hpp>); about 1x the messages' own size.
    bool wire_cache = true;
    llm_config llm;
    compressor_config compressor;
    session_config session;
    history_config history;
    memory_config memory;
    ocr_config ocr;
    postgres_config postgres;
    admin_config admin;
    bool multimodal = false;                   ///< the main model takes images: the agent's `images` slot (multimodal / describe_images)
};



namespace detail {
inline void require(bool ok, const char* key, const char* rule) {
    if (!ok) throw error(errc::invalid_config, std::string(key) + ": " + rule);
}
} // namespace detail

/// Checks the ranges the types cannot express. Throws ania::error (invalid_config) naming the key.
inline void validate(const config& c) {
    // Below 5% a window would compress after every message: certainly a typo (0.8 written as 0.008).
    detail::require(std::isfinite(c.compress_ratio) && c.compress_ratio > 0.05 && c.compress_ratio <= 1.0,
                    "compress_ratio", "must be in (0.05, 1]");
    detail::require(c.llm.connect_timeout_ms > 0, "llm.connect_timeout_ms", "must be > 0");
    detail::require(c.llm.timeout_ms > 0, "llm.timeout_ms", "must be > 0");
    detail::require(c.llm.stall_timeout_ms >= 0, "llm.stall_timeout_ms", "must be >= 0 (0 disables)");
    detail::require(c.llm.max_retries >= 0 && c.llm.max_retries <= 20, "llm.max_retries", "must be in [0, 20]");
    detail::require(c.postgres.pool_size > 0 && c.postgres.pool_size <= 1000, "postgres.pool_size", "must be in [1, 1000]");
    detail::require(c.postgres.statement_timeout_ms >= 0, "postgres.statement_timeout_ms", "must be >= 0 (0: the server's)");
    detail::require(c.session.max_idle_minutes >= 0, "session.max_idle_minutes", "must be >= 0 (0 disables)");
    detail::require(c.session.max_sessions >= 0, "session.max_sessions", "must be >= 0 (0 disables)");
    detail::require(c.session.group_auto_clear >= 0, "session.group_auto_clear", "must be >= 0 (0 disables)");
    detail::require(c.compressor.stack_summaries >= 0, "compressor.stack_summaries", "must be >= 0 (0 disables)");
    detail::require(c.compressor.clear_tool_results.trigger >= 0, "compressor.clear_tool_results.trigger", "must be >= 0 (0: at the threshold)");
    detail::require(c.compressor.clear_tool_results.keep >= 0, "compressor.clear_tool_results.keep", "must be >= 0");
    detail::require(c.compressor.clear_tool_results.clear_at_least >= 0, "compressor.clear_tool_results.clear_at_least", "must be >= 0");
    detail::require(std::isfinite(c.compressor.verify.max_ratio) && c.compressor.verify.max_ratio >= 0 && c.compressor.verify.max_ratio <= 1,
                    "compressor.verify.max_ratio", "must be in [0, 1] (0 disables)");
    detail::require(c.compressor.verify.breaker_failures >= 0, "compressor.verify.breaker_failures", "must be >= 0 (0 disables)");
    detail::require(c.compressor.verify.breaker_cool_down_seconds > 0, "compressor.verify.breaker_cool_down_seconds", "must be > 0");
    detail::require(!c.admin.enabled || !c.admin.token.empty() || !c.admin.token_file.empty(), "admin.enabled",
                    "needs admin.token or admin.token_file (the console never runs open)");
    detail::require(!c.admin.enabled || c.admin.listen.rfind(':') != std::string::npos, "admin.listen", "must be host:port");
    detail::require(c.admin.busy_threads >= 0 && c.admin.busy_threads <= 1024, "admin.busy_threads", "must be in [0, 1024] (0: cores - 1)");
    detail::require(std::isfinite(c.admin.requests_per_second) && c.admin.requests_per_second >= 0, "admin.requests_per_second",
                    "must be >= 0 (0: no limit)");
    detail::require(std::isfinite(c.admin.burst) && c.admin.burst >= 1, "admin.burst", "must be >= 1");
    detail::require(c.history.archive.max_messages >= 0, "history.archive.max_messages", "must be >= 0 (0: no limit)");
    detail::require(c.history.archive.max_bytes >= 0, "history.archive.max_bytes", "must be >= 0 (0: no limit)");
    detail::require(c.memory.max_entries > 0, "memory.max_entries", "must be > 0");
    detail::require(c.memory.max_content_runes > 0, "memory.max_content_runes", "must be > 0");
    detail::require(c.memory.inject_entries >= 0, "memory.inject_entries", "must be >= 0");
    detail::require(c.memory.inject_runes >= 0, "memory.inject_runes", "must be >= 0");
    detail::require(c.memory.max_user_id_runes > 0, "memory.max_user_id_runes", "must be > 0");
    detail::require(c.memory.max_tags >= 0, "memory.max_tags", "must be >= 0");
    detail::require(c.memory.max_tag_runes > 0, "memory.max_tag_runes", "must be > 0");
    detail::require(c.memory.versions_kept >= 0, "memory.versions_kept", "must be >= 0");
    detail::require(!c.memory.near_duplicate_threshold ||
                        (*c.memory.near_duplicate_threshold > 0.0 && *c.memory.near_duplicate_threshold <= 1.0),
                    "memory.near_duplicate_threshold", "must be in (0, 1]");
}

/// Loading: `load_config(j)` (a JSON object), `parse_config(text)` (parsed within the default parse_limits),
/// `load_config_file(path)` (a file's text; errors start with the path),
/// `to_json(cfg)` (every key with its value, in declaration order: what load_config reads back unchanged).
/// Keys that are absent keep their defaults. An unknown key or a wrong type is an ania::error (invalid_config)
/// that names the key and, for unknown keys, lists the valid ones; the result is validate()d. A section of your
/// own is read the same way (`load_config<my_section>(j)`, `parse_config<my_section>(text)`, `to_json(section)`)
/// once it is adapted with BOOST_HANA_ADAPT_STRUCT and <ania/config/io.hpp> is included.
/// Header-only mode: these are the templates of <ania/config/io.hpp> (T defaults to config), instantiated only
/// where a file loads a configuration. Compiled mode: for ania::config, these three, compiled in the library.
#if !ANIA_HEADER_ONLY
[[nodiscard]] config load_config(const json& j);
[[nodiscard]] config parse_config(std::string_view text);
[[nodiscard]] config load_config_file(const std::string& path);
[[nodiscard]] json to_json(const config& c);
#endif

/// Which model of the configuration a client is built for (from_config<openai::client_options>(cfg, role)).
enum class model_role : std::uint8_t {
    main,         ///< `llm.*`
    compression,  ///< `compressor.*` when compressor.model is set, else llm's own (SPEC §1)
    vision,       ///< `ocr.*` laid over llm's; the key is always ocr's (SPEC §5)
};

} // namespace ania
