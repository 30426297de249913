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

#include <ania/detail/linkage.hpp>
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
[[nodiscard]] ANIA_INLINE std::string image_marker_for(std::string_view reference,
                                                       std::string_view pattern = default_image_marker);

/// A copy of `m` whose image parts are text markers (remote URLs die, data URIs bloat rows). Messages
/// without images are returned as they are.
[[nodiscard]] ANIA_INLINE message degrade_images(message m, std::string_view pattern = default_image_marker);

/// True when a message holds an image part (what the stored copy turns into a marker).
[[nodiscard]] ANIA_INLINE bool has_images(const message& m) noexcept;

/// Degrades the images of `msgs` in place (see degrade_images); messages without images are not touched.
ANIA_INLINE void degrade_images_in_place(std::vector<message>& msgs, std::string_view pattern = default_image_marker);

/// SPEC §2 "Images are degraded on persist": what a store is given for `msgs` (a whole history for replace,
/// a turn for append): the same messages with image parts as markers. Empty when no message holds an image,
/// so the caller writes `msgs` as they are, without a copy.
[[nodiscard]] ANIA_INLINE std::optional<std::vector<message>> stored_copy(std::span<const message> msgs,
                                                                          std::string_view pattern = default_image_marker);

/// The two copies of one turn (SPEC §2), element for element the same messages: the window keeps `window`
/// (the original user text, the images), the store gets `stored` (the same, images as markers).
struct turn_copies {
    std::vector<message> window;
    std::vector<message> stored;
};

namespace detail {

/// The turn as the window keeps it (see make_turn_copies).
[[nodiscard]] ANIA_INLINE std::vector<message> original_turn(std::span<const message> request, std::size_t user_index,
                                                             const std::optional<std::string>& persist_user_text,
                                                             const persist_options& opt);

} // namespace detail

/// SPEC §2: what a turn leaves behind. `request` is the whole assembled request after the turn ran and
/// `user_index` the position of this turn's user message in it: the suffix from there (the user message, the
/// tool-message chain and the reply) is the turn. With `persist_user_text` the user message holds that
/// original text instead of what was sent (memory blocks, knowledge snippets, reminders and hook context
/// spliced in for this turn only go into this request, never into the window or the store); the images the
/// user sent stay. An incomplete turn is repaired (see persist_options::incomplete), so neither copy holds
/// unanswered tool calls. This is the one place both copies are made: append `window` to the window and
/// `stored` to the store, and the two stay aligned (a later drop_front of k messages means the same k).
[[nodiscard]] ANIA_INLINE turn_copies make_turn_copies(std::span<const message> request, std::size_t user_index,
                                                       const std::optional<std::string>& persist_user_text = std::nullopt,
                                                       const persist_options& opt = {});

/// make_turn_copies for a caller that built the user message as it is to be kept (the agent: the user's
/// text and images, without this turn's injections): `turn` starts with the user message as it was sent,
/// which `kept_user` replaces in both copies.
[[nodiscard]] ANIA_INLINE turn_copies make_turn_copies(std::span<const message> turn, message kept_user,
                                                       const persist_options& opt = {});

/// The stored copy alone (make_turn_copies(...).stored), for a caller whose window is kept elsewhere.
[[nodiscard]] ANIA_INLINE std::vector<message> persisted_turn(std::span<const message> request, std::size_t user_index, const std::optional<std::string>& persist_user_text = std::nullopt, const persist_options& opt = {});

/// Loads a session and runs the transcript repair on it (stored rows may have been skipped, or written by an
/// older version). A store failure is logged and gives an empty history: the conversation starts afresh in
/// memory rather than failing.
template <history_store S>
[[nodiscard]] std::vector<message> load_history(S& store, std::string_view session,
                                                const log_sink& log = stderr_log_sink(),
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

#if ANIA_HEADER_ONLY
#include <ania/history/persist-inl.hpp>
#endif
