// ania/ania.hpp -- the umbrella header: everything in ania that needs only Boost and nlohmann_json.
// SPDX-License-Identifier: MIT
// The SQLite store is opt-in twice: #include <ania/store/sqlite_store.hpp> and dependency('ania-sqlite').
#pragma once

#include <ania/detail/linkage.hpp>
#include <ania/fwd.hpp>
#include <ania/version.hpp>
#include <ania/error.hpp>
#include <ania/log.hpp>
#include <ania/text/utf8.hpp>
#include <ania/text/sha256.hpp>
#include <ania/text/shared_text.hpp>
#include <ania/message.hpp>
#include <ania/usage.hpp>
#if ANIA_HEADER_ONLY  // compiled mode: include <ania/json.hpp> and <ania/json_writer.hpp> for the JSON API
#include <ania/json.hpp>
#endif
#include <ania/transcript.hpp>
#include <ania/config.hpp>
#include <ania/concepts.hpp>
#include <ania/store/ram_store.hpp>
#include <ania/history/persist.hpp>
#include <ania/history/background_writer.hpp>
#include <ania/context/token_counter.hpp>
#include <ania/context/token_window.hpp>
#include <ania/context/maybe_compress.hpp>
#include <ania/compressor/truncate_oldest_half.hpp>
#include <ania/compressor/budget_trim.hpp>
#include <ania/compressor/llm_summary.hpp>
#include <ania/compressor/with_fallback.hpp>
#include <ania/compressor/clear_tool_results.hpp>
#include <ania/compressor/ladder.hpp>
#include <ania/compressor/summary_breaker.hpp>
#include <ania/compressor/default_compressor.hpp>
#include <ania/tool.hpp>
#include <ania/memory/scope.hpp>
#include <ania/memory/entry.hpp>
#include <ania/memory/tokenize.hpp>
#include <ania/memory/similarity.hpp>
#include <ania/memory/ram_backend.hpp>
#include <ania/memory/manager.hpp>
#include <ania/memory/tools.hpp>
#include <ania/memory/admin.hpp>
#include <ania/memory/backfill.hpp>
#if ANIA_HEADER_ONLY
#include <ania/json_writer.hpp>
#endif
#include <ania/agent/agent.hpp>
#include <ania/agent/slots.hpp>
#include <ania/session/eviction.hpp>
#include <ania/session/manual_clock.hpp>
#include <ania/session/session_cache.hpp>
