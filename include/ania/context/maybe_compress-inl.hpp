// ania/context/maybe_compress-inl.hpp -- the definitions of <ania/context/maybe_compress.hpp>.
// Header-only mode includes this from there; compiled mode compiles it once, in the library (see
// <ania/detail/linkage.hpp>).
// SPDX-License-Identifier: MIT
#pragma once

#include <ania/detail/linkage.hpp>
#if !ANIA_HEADER_ONLY && !defined(ANIA_BUILDING_LIBRARY)
static_assert(false, "compiled mode: the library defines what <ania/context/maybe_compress-inl.hpp> defines; include <ania/context/maybe_compress.hpp>");
#endif

#include <ania/context/maybe_compress.hpp>
#include <ania/detail/timestamp.hpp>

namespace ania {

ANIA_INLINE void detail::notify_pre_compact(const compress_options& hooks, const pre_compact_event& e) {
    try {
        hooks.pre_compact(e);
    } catch (const std::exception& ex) {
        log_to(hooks.log, log_level::warn, std::string("PreCompact hook threw: ") + ex.what());
    } catch (...) {
        log_to(hooks.log, log_level::warn, "PreCompact hook threw");
    }
}

ANIA_INLINE bool detail::take_compression_result(const compression_result& r, compress_report& report,
                                                 turn_stats& stats, const compress_options& hooks) {
    stats.record_compression(r.used);
    report.used = r.used;
    report.error = r.error;
    if (!r.ok) {
        report.status = compress_status::failed;
        log_to(hooks.log, log_level::error, "compression failed, history kept: " + r.error);
        return false;
    }
    if (!r.error.empty()) log_to(hooks.log, log_level::warn, "compression fell back: " + r.error);
    return true;
}

ANIA_INLINE std::optional<std::vector<message>> detail::repaired_history(std::span<const message> h,
                                                                      compress_report& report,
                                                                      const compress_options& hooks) {
    if (is_valid_transcript(h)) return std::nullopt;
    std::vector<message> fixed(h.begin(), h.end());
    report.repaired = repair_transcript(fixed, hooks.repair);
    return fixed;
}

ANIA_INLINE void detail::log_persist_failure(const compress_options& hooks, const std::exception& e) {
    log_to(hooks.log, log_level::error, std::string("compression: persisting the new history failed: ") + e.what());
}

ANIA_INLINE archive_batch detail::make_archive_batch(std::span<const message> removed, std::span<const message> prefix,
                                                     std::string_view image_marker) {
    // A head the compaction kept (stacked summaries put back in front as they were) is not removed.
    std::size_t same = 0;
    while (same < removed.size() && same < prefix.size() && removed[same] == prefix[same]) ++same;
    removed = removed.subspan(same);
    prefix = prefix.subspan(same);
    archive_batch b;
    b.messages.assign(removed.begin(), removed.end());
    degrade_images_in_place(b.messages, image_marker);
    for (const message& m : prefix) {
        if (!b.summary.empty()) b.summary += "\n\n";
        b.summary += m.text();
    }
    b.archived_at = detail::utc_now();
    return b;
}

} // namespace ania
