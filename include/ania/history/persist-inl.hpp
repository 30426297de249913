// ania/history/persist-inl.hpp -- the definitions of <ania/history/persist.hpp>.
// Header-only mode includes this from there; compiled mode compiles it once, in the library (see
// <ania/detail/linkage.hpp>).
// SPDX-License-Identifier: MIT
#pragma once

#include <ania/detail/linkage.hpp>
#if !ANIA_HEADER_ONLY && !defined(ANIA_BUILDING_LIBRARY)
static_assert(false, "compiled mode: the library defines what <ania/history/persist-inl.hpp> defines; include <ania/history/persist.hpp>");
#endif

#include <ania/history/persist.hpp>

namespace ania {

ANIA_INLINE std::string image_marker_for(std::string_view reference, std::string_view pattern) {
    std::string out(pattern);
    if (const auto at = out.find("{hash}"); at != std::string::npos) out.replace(at, 6, text::short_hash(reference));
    return out;
}

ANIA_INLINE message degrade_images(message m, std::string_view pattern) {
    if (m.form != content_form::parts) return m;
    for (content_part& p : m.parts) {
        if (p.type != content_part::kind::image_url) continue;
        content_part marker = content_part::make_text(image_marker_for(p.url, pattern));
        p = std::move(marker);
    }
    return m;
}

ANIA_INLINE bool has_images(const message& m) noexcept {
    if (m.form != content_form::parts) return false;
    for (const content_part& p : m.parts)
        if (p.type == content_part::kind::image_url) return true;
    return false;
}

ANIA_INLINE void degrade_images_in_place(std::vector<message>& msgs, std::string_view pattern) {
    for (message& m : msgs)
        if (has_images(m)) m = degrade_images(std::move(m), pattern);
}

ANIA_INLINE std::optional<std::vector<message>> stored_copy(std::span<const message> msgs, std::string_view pattern) {
    if (std::none_of(msgs.begin(), msgs.end(), [](const message& m) { return has_images(m); })) return std::nullopt;
    std::vector<message> out(msgs.begin(), msgs.end());
    degrade_images_in_place(out, pattern);
    return out;
}

} // namespace ania

namespace ania::detail {

ANIA_INLINE std::vector<message> original_turn(std::span<const message> request, std::size_t user_index,
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

} // namespace ania::detail

namespace ania {

ANIA_INLINE turn_copies make_turn_copies(std::span<const message> request, std::size_t user_index,
                                         const std::optional<std::string>& persist_user_text,
                                         const persist_options& opt) {
    turn_copies t;
    t.window = detail::original_turn(request, user_index, persist_user_text, opt);
    t.stored = t.window;
    degrade_images_in_place(t.stored, opt.image_marker);
    return t;
}

ANIA_INLINE turn_copies make_turn_copies(std::span<const message> turn, message kept_user, const persist_options& opt) {
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

ANIA_INLINE std::vector<message> persisted_turn(std::span<const message> request, std::size_t user_index,
                                                const std::optional<std::string>& persist_user_text,
                                                const persist_options& opt) {
    std::vector<message> turn = detail::original_turn(request, user_index, persist_user_text, opt);
    degrade_images_in_place(turn, opt.image_marker);
    return turn;
}

} // namespace ania
