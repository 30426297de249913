// ania/history/persist.hpp -- what a turn writes to history (SPEC §2), and loading it back safely.
// SPDX-License-Identifier: MIT
#pragma once

#include <algorithm>
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

/// SPEC §2: the marker an image part becomes in every stored copy; `{hash}` is the first 8 hex digits of the
/// SHA-256 of the image reference (URL or data URI).
inline constexpr std::string_view default_image_marker = "[图片 {hash}]";

/// How the persisted copy of a turn is made.
struct persist_options {
    std::string image_marker{default_image_marker};
    /// A turn that did not complete can end in tool calls without results: they get "[cancelled]" results in
    /// both copies (add_cancelled, the default) or are dropped (drop_calls). Never stored unanswered.
    repair_options incomplete{};
};

/// The marker text for one image reference.
[[nodiscard]] inline std::string image_marker_for(std::string_view reference, std::string_view pattern = default_image_marker) {
    std::string out(pattern);
    if (const auto at = out.find("{hash}"); at != std::string::npos) out.replace(at, 6, text::short_hash(reference));
    return out;
}

/// A copy of `m` whose image parts are text markers (remote URLs die, data URIs bloat rows). Messages
/// without images are returned as they are.
[[nodiscard]] inline message degrade_images(message m, std::string_view pattern = default_image_marker) {
    if (m.form != content_form::parts) return m;
    for (content_part& p : m.parts) {
        if (p.type != content_part::kind::image_url) continue;
        content_part marker = content_part::make_text(image_marker_for(p.url, pattern));
        p = std::move(marker);
    }
    return m;
}

/// True when a message holds an image part (what the stored copy turns into a marker).
[[nodiscard]] inline bool has_images(const message& m) noexcept {
    if (m.form != content_form::parts) return false;
    for (const content_part& p : m.parts)
        if (p.type == content_part::kind::image_url) return true;
    return false;
}

/// Degrades the images of `msgs` in place (see degrade_images); messages without images are not touched.
inline void degrade_images_in_place(std::vector<message>& msgs, std::string_view pattern = default_image_marker) {
    for (message& m : msgs)
        if (has_images(m)) m = degrade_images(std::move(m), pattern);
}

/// SPEC §2 "Images are degraded on persist": what a store is given for `msgs` (a whole history for replace,
/// a turn for append): the same messages with image parts as markers. Empty when no message holds an image,
/// so the caller writes `msgs` as they are, without a copy.
[[nodiscard]] inline std::optional<std::vector<message>> stored_copy(std::span<const message> msgs,
                                                                     std::string_view pattern = default_image_marker) {
    if (std::none_of(msgs.begin(), msgs.end(), [](const message& m) { return has_images(m); })) return std::nullopt;
    std::vector<message> out(msgs.begin(), msgs.end());
    degrade_images_in_place(out, pattern);
    return out;
}

/// The two copies of one turn (SPEC §2), element for element the same messages: the window keeps `window`
/// (the original user text, the images), the store gets `stored` (the same, images as markers).
struct turn_copies {
    std::vector<message> window;
    std::vector<message> stored;
};

namespace detail {

/// The turn as the window keeps it (see make_turn_copies).
[[nodiscard]] inline std::vector<message> original_turn(std::span<const message> request, std::size_t user_index,
                                                        const std::optional<std::string>& persist_user_text,
                                                        const persist_options& opt) {
    std::vector<message> turn;
    if (user_index >= request.size()) return turn;
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
    repair_transcript(turn, opt.incomplete);
    return turn;
}

} // namespace detail

/// SPEC §2: what a turn leaves behind. `request` is the whole assembled request after the turn ran and
/// `user_index` the position of this turn's user message in it: the suffix from there (the user message, the
/// tool-message chain and the reply) is the turn. With `persist_user_text` the user message holds that
/// original text instead of what was sent (memory blocks, knowledge snippets, reminders and hook context
/// spliced in for this turn only go into this request, never into the window or the store); the images the
/// user sent stay. An incomplete turn is repaired (see persist_options::incomplete), so neither copy holds
/// unanswered tool calls. This is the one place both copies are made: append `window` to the window and
/// `stored` to the store, and the two stay aligned (a later drop_front of k messages means the same k).
[[nodiscard]] inline turn_copies make_turn_copies(std::span<const message> request, std::size_t user_index,
                                                  const std::optional<std::string>& persist_user_text = std::nullopt,
                                                  const persist_options& opt = {}) {
    turn_copies t;
    t.window = detail::original_turn(request, user_index, persist_user_text, opt);
    t.stored = t.window;
    degrade_images_in_place(t.stored, opt.image_marker);
    return t;
}

/// make_turn_copies for a caller that built the user message as it is to be kept (the agent: the user's
/// text and images, without this turn's injections): `turn` starts with the user message as it was sent,
/// which `kept_user` replaces in both copies.
[[nodiscard]] inline turn_copies make_turn_copies(std::span<const message> turn, message kept_user, const persist_options& opt = {}) {
    turn_copies t;
    if (turn.empty()) return t;
    t.window.reserve(turn.size());
    t.window.push_back(std::move(kept_user));
    t.window.insert(t.window.end(), turn.begin() + 1, turn.end());
    repair_transcript(t.window, opt.incomplete);
    t.stored = t.window;
    degrade_images_in_place(t.stored, opt.image_marker);
    return t;
}

/// The stored copy alone (make_turn_copies(...).stored), for a caller whose window is kept elsewhere.
[[nodiscard]] inline std::vector<message> persisted_turn(std::span<const message> request, std::size_t user_index,
                                                         const std::optional<std::string>& persist_user_text = std::nullopt,
                                                         const persist_options& opt = {}) {
    std::vector<message> turn = detail::original_turn(request, user_index, persist_user_text, opt);
    degrade_images_in_place(turn, opt.image_marker);
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
