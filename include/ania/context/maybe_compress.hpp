// ania/context/maybe_compress.hpp -- decide, notify PreCompact, compress, repair, account and persist.
// SPDX-License-Identifier: MIT
#pragma once

#include <concepts>
#include <cstddef>
#include <cstdint>
#include <exception>
#include <functional>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include <ania/concepts.hpp>
#include <ania/detail/linkage.hpp>
#include <ania/context/token_window.hpp>
#include <ania/history/persist.hpp>
#include <ania/log.hpp>
#include <ania/store/ram_store.hpp>
#include <ania/transcript.hpp>
#include <ania/usage.hpp>

namespace ania {

/// What the PreCompact hook is told. It is a notification: it cannot veto or change the compression.
struct pre_compact_event {
    std::string_view session;
    std::int64_t context_tokens;  ///< the context size that made compression due (recorded, else estimated)
    std::int64_t threshold;       ///< ratio x max_context_tokens
    std::size_t messages;         ///< history length before compressing
};

struct compress_options {
    std::function<void(const pre_compact_event&)> pre_compact;  ///< exceptions are caught and logged
    log_sink log = stderr_log_sink();
    repair_options repair{};
    std::string image_marker{default_image_marker};  ///< what images become in the replaced stored copy
    /// When the result is a pure suffix and the store can drop a prefix, drop it instead of replace().
    /// Only right when the store holds exactly the window's history (the default, replace, is always right).
    bool drop_front_when_possible = false;
    /// Compress although the window is under its threshold: the provider said the prompt does not fit
    /// (failure_kind::context_length_exceeded), so the estimate was wrong. An empty history is left alone.
    bool force = false;
    /// Non-destructive compaction: when the store is an archiving_store, what the compaction removes
    /// (history[0, dropped)) is archived with the summary that replaced it, in the same write.
    bool archive = false;
};

enum class compress_status : std::uint8_t { not_due, compressed, failed };

struct compress_report {
    compress_status status = compress_status::not_due;
    std::size_t before = 0, after = 0;  ///< history length
    std::size_t dropped = 0;            ///< the oldest messages replaced: history[0, dropped) is gone
    std::size_t prefix = 0;             ///< new messages in front of what was kept (1 for a summary, 0 for a cut)
    std::size_t edited = 0;             ///< messages replaced in place (tool results cleared)
    std::size_t archived = 0;           ///< of the dropped, how many went to the archive (compress_options::archive)
    std::vector<compression_step> steps;  ///< what each rung of a ladder did (empty for another compressor)
    usage used;                         ///< tokens the compression spent (also added to the turn's stats)
    repair_report repaired;             ///< what the repair pass changed in the result
    std::string error;                  ///< why the compressor failed, or why its primary did
};

namespace detail {
// maybe_compress's steps that do not depend on its template arguments, written once (compiled mode: in the
// library), so that a compressor over a user's client instantiates little more than the calls.

/// The PreCompact hook, its exceptions caught and logged.
ANIA_INLINE void notify_pre_compact(const compress_options& hooks, const pre_compact_event& e);
/// The compressor's result accounted (stats, report) and logged; false when it failed (history kept).
[[nodiscard]] ANIA_INLINE bool take_compression_result(const compression_result& r, compress_report& report,
                                                       turn_stats& stats, const compress_options& hooks);
/// The compressed history repaired when it is not a valid transcript (what the repair changed goes to the
/// report); nullopt when it is valid as it is.
[[nodiscard]] ANIA_INLINE std::optional<std::vector<message>> repaired_history(std::span<const message> h,
                                                                            compress_report& report,
                                                                            const compress_options& hooks);
/// A failure to persist the new history, logged (the window keeps it; the next write repeats it).
ANIA_INLINE void log_persist_failure(const compress_options& hooks, const std::exception& e);
/// What a compaction archives: `removed` as stored (images as markers), the summary (the text of the
/// messages put in front of what was kept), the time.
[[nodiscard]] ANIA_INLINE archive_batch make_archive_batch(std::span<const message> removed, std::span<const message> prefix,
                                                           std::string_view image_marker);

} // namespace detail

/// A compressor whose cheap first rung starts below the threshold (clear_tool_results' `trigger`) says where.
template <class C>
concept early_triggered = requires(const C& c) {
    { c.trigger_tokens() } -> std::convertible_to<std::int64_t>;
};

/// The window's compression_due(), or, for an early_triggered compressor, its context past the trigger.
template <class Counter, class C>
[[nodiscard]] bool compression_due(const token_window<Counter>& window, const C& comp) noexcept {
    if (window.compression_due()) return true;
    if constexpr (early_triggered<C>) {
        const std::int64_t t = comp.trigger_tokens();
        return t > 0 && window.threshold() >= 0 && !window.empty() && window.context_tokens() > t;
    } else {
        return false;
    }
}

/// SPEC §1 maybe_compress. If the window's context (the last request's prompt tokens, or the estimate when
/// none is recorded: after a restart, after a compression) exceeds the threshold: fire PreCompact, run the
/// compressor, add its tokens to `stats.compress_usage` (not an iteration), apply the result, run the
/// transcript repair on it, reset `last_prompt_tokens` to 0 and write the new history with `replace` — images
/// as markers (SPEC §2: the window keeps them, the store never holds them). If still over, the next call
/// compresses again (on the estimate), converging step by step. A store failure is logged, never thrown: the
/// conversation goes on in memory. When the compressor fails (a bare one, without fallback) the history is
/// left unchanged and the next round tries again.
template <class Counter, compressor C, history_store S>
compress_report maybe_compress(token_window<Counter>& window, C& comp, S& store, std::string_view session,
                               turn_stats& stats, const compress_options& hooks = {}) {
    compress_report report;
    report.before = window.size();
    const bool due = window.compression_due() || (hooks.force && window.size() > 0);
    if (!(due || compression_due(window, comp))) return report;
    // PreCompact announces a compaction; an early trigger (a cheap rung below the threshold, which often finds
    // nothing to clear) is not one.
    if (due && hooks.pre_compact) detail::notify_pre_compact(hooks, {session, window.context_tokens(), window.threshold(), window.size()});
    compression_result r;
    try {
        // Forced (the provider refused the prompt): every rung of a ladder may run, whatever the estimate says.
        r = comp.compress({window.messages(), window.prefix_tokens(), window.context_tokens(),
                           hooks.force ? 0 : window.compression_target(), window.input_count()});
    } catch (const std::exception& e) {
        r = compression_result::failure(std::string("compressor threw: ") + e.what());
    }
    if (!detail::take_compression_result(r, report, stats, hooks)) {
        report.after = window.size();
        report.steps = std::move(r.steps);
        return report;
    }
    if (!r.changes()) {  // every rung had nothing to do (a ladder whose cheap rung found nothing to clear)
        report.status = compress_status::not_due;
        report.after = window.size();
        report.steps = std::move(r.steps);
        return report;
    }
    const bool suffix_only = r.prefix.empty() && r.edits.empty();
    const std::size_t dropped = std::min(r.keep_from, window.size());
    std::optional<archive_batch> batch;
    if constexpr (archiving_store<S>) {
        if (hooks.archive && dropped > 0)
            batch = detail::make_archive_batch(window.messages().first(dropped), r.prefix, hooks.image_marker);
    }
    report.dropped = dropped;
    report.prefix = r.prefix.size();
    report.edited = r.edits.size();
    report.steps = std::move(r.steps);
    window.apply(std::move(r));
    if (auto fixed = detail::repaired_history(window.messages(), report, hooks)) window.assign(std::move(*fixed));
    window.reset_last_prompt_tokens();
    report.status = compress_status::compressed;
    report.after = window.size();
    try {
        if constexpr (archiving_store<S>) {
            if (batch) {
                report.archived = batch->messages.size();
                if (hooks.drop_front_when_possible && suffix_only && !report.repaired.changed()) {
                    store.drop_front_archiving(session, dropped, std::move(*batch));
                } else if (auto degraded = stored_copy(window.messages(), hooks.image_marker)) {
                    store.replace_archiving(session, std::move(*degraded), std::move(*batch));
                } else {
                    store.replace_archiving(session, window.messages(), std::move(*batch));
                }
                return report;
            }
        }
        if constexpr (prefix_dropping_store<S>) {
            if (hooks.drop_front_when_possible && suffix_only && !report.repaired.changed()) {
                store.drop_front(session, dropped);
                return report;
            }
        }
        if (auto degraded = stored_copy(window.messages(), hooks.image_marker)) store.replace(session, *degraded);
        else store.replace(session, window.messages());  // no image: nothing to copy
    } catch (const std::exception& e) {
        detail::log_persist_failure(hooks, e);
    }
    return report;
}

/// maybe_compress without persistence.
template <class Counter, compressor C>
compress_report maybe_compress(token_window<Counter>& window, C& comp, turn_stats& stats, const compress_options& hooks = {}) {
    null_store none;
    return maybe_compress(window, comp, none, {}, stats, hooks);
}

} // namespace ania

#if ANIA_HEADER_ONLY
#include <ania/context/maybe_compress-inl.hpp>
#endif
