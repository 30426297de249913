// ania/history/persist.hpp -- what a turn writes to history (SPEC §2), and loading it back safely.
// SPDX-License-Identifier: MIT
#pragma once

#include <cstddef>
#include <exception>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include <ania/concepts.hpp>
#include <ania/log.hpp>
#include <ania/message.hpp>
#include <ania/text/sha256.hpp>
#include <ania/transcript.hpp>

namespace ania {

/// How the persisted copy of a turn is made.
struct persist_options {
    /// The marker an image part becomes in the persisted copy; `{hash}` is replaced by the first 8 hex digits
    /// of the SHA-256 of the image reference (URL or data URI). SPEC §2: "[图片 <hash>]".
    std::string image_marker = "[图片 {hash}]";
    /// A turn that did not complete can end in tool calls without results: they get "[cancelled]" results in
    /// the persisted copy (add_cancelled, the default) or are dropped (drop_calls). Never stored unanswered.
    repair_options incomplete{};
};

/// The marker text for one image reference.
[[nodiscard]] inline std::string image_marker_for(std::string_view reference, std::string_view pattern = "[图片 {hash}]") {
    std::string out(pattern);
    if (const auto at = out.find("{hash}"); at != std::string::npos) out.replace(at, 6, text::short_hash(reference));
    return out;
}

/// A copy of `m` whose image parts are text markers (remote URLs die, data URIs bloat rows). Messages
/// without images are returned as they are.
[[nodiscard]] inline message degrade_images(message m, std::string_view pattern = "[图片 {hash}]") {
    if (m.form != content_form::parts) return m;
    for (content_part& p : m.parts) {
        if (p.type != content_part::kind::image_url) continue;
        content_part marker = content_part::make_text(image_marker_for(p.url, pattern));
        p = std::move(marker);
    }
    return m;
}

/// SPEC §2: the persisted copy of a turn. `request` is the whole assembled request after the turn ran and
/// `user_index` the position of this turn's user message in it: the suffix from there (the user message, the
/// tool-message chain and the reply) is what history keeps. With `persist_user_text`, the stored user message
/// holds that original text instead of what was sent (memory blocks, knowledge snippets, reminders and hook
/// context spliced in for this turn only); its images stay (as markers). Images become markers everywhere.
/// An incomplete turn is repaired (see persist_options::incomplete), so the store never receives unanswered
/// tool calls.
[[nodiscard]] inline std::vector<message> persisted_turn(std::span<const message> request, std::size_t user_index,
                                                         const std::optional<std::string>& persist_user_text = std::nullopt,
                                                         const persist_options& opt = {}) {
    std::vector<message> turn;
    if (user_index >= request.size()) return turn;
    turn.reserve(request.size() - user_index);
    turn.assign(request.begin() + static_cast<std::ptrdiff_t>(user_index), request.end());
    if (persist_user_text && turn.front().role == role::user) {
        message& u = turn.front();
        std::string original = text::repair_utf8(*persist_user_text);
        if (u.form == content_form::parts) {  // the original text first, then the images the user sent
            std::vector<content_part> parts;
            parts.push_back(content_part::make_text(std::move(original)));
            for (content_part& p : u.parts)
                if (p.type != content_part::kind::text) parts.push_back(std::move(p));
            u.parts = std::move(parts);
        } else {
            u.form = content_form::text;
            u.content = std::move(original);
        }
    }
    for (message& m : turn) m = degrade_images(std::move(m), opt.image_marker);
    repair_transcript(turn, opt.incomplete);
    return turn;
}

/// Loads a session and runs the transcript repair on it (stored rows may have been skipped, or written by an
/// older version). A store failure is logged and gives an empty history: the conversation starts afresh in
/// memory rather than failing.
template <history_store S>
[[nodiscard]] std::vector<message> load_history(S& store, std::string_view session, const log_sink& log = stderr_log_sink(),
                                                const repair_options& repair = {}) {
    std::vector<message> h;
    try {
        h = store.load(session);
    } catch (const std::exception& e) {
        log_to(log, log_level::error, std::string("load_history: ") + e.what() + " (continuing without history)");
        return {};
    }
    const repair_report r = repair_transcript(h, repair);
    if (r.changed())
        log_to(log, log_level::warn,
               "load_history: repaired the stored transcript (" + std::to_string(r.results_dropped) + " results dropped, " +
                   std::to_string(r.results_added) + " added, " + std::to_string(r.calls_dropped) + " calls dropped)");
    return h;
}

} // namespace ania
