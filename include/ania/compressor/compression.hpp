// ania/compressor/compression.hpp -- what a compressor is given (compress_input) and what it answers (compression_result).
// SPDX-License-Identifier: MIT
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <ania/message.hpp>
#include <ania/text/shared_text.hpp>
#include <ania/usage.hpp>

namespace ania {

/// What a compressor is given: the history, and (when the caller has them) its cached token counts as prefix
/// sums, size `history.size() + 1` (or empty): `prefix_tokens[j] - prefix_tokens[i]` = tokens of
/// `history[i..j)`. `prefix_tokens[0]` need not be 0.
struct compress_input {
    std::span<const message> history;
    std::span<const std::int64_t> prefix_tokens;
    /// The context size that made the compression due, and the size to bring it under (the threshold), in
    /// the units `count` answers in; -1 = unknown (a compressor called by hand). A ladder uses them to stop
    /// at the first rung that brings the context under `target_tokens`.
    std::int64_t context_tokens = -1;
    std::int64_t target_tokens = -1;
    /// Counts one message as the caller's window does (its counter, calibrated); unset = unknown.
    struct counter_fn {
        std::int64_t (*fn)(const void* self, const message& m) = nullptr;
        const void* self = nullptr;
        explicit operator bool() const noexcept { return fn != nullptr; }
        std::int64_t operator()(const message& m) const { return fn(self, m); }
    } count{};
};

/// A message of the history replaced in place (a tool result cleared, a call's arguments dropped): the
/// transcript keeps its shape, so every call stays paired with its result. Either the whole message
/// (`replacement`), or, cheaper, only its text (`content`: the message keeps its role, ids and name, and its
/// content becomes this text; applied in the message's own buffer, which a shorter text fits without allocating).
struct message_edit {
    std::size_t index;  ///< into compress_input::history
    std::optional<message> replacement{};  ///< the whole new message, or
    std::optional<shared_text> content{};  ///< only its new text (when there is no replacement)

    /// The edit applied to `m` (the message at `index`).
    void apply_to(message& m) && {
        if (replacement) {
            m = std::move(*replacement);
            return;
        }
        if (!content) return;
        m.content.assign(content->view());
        m.form = content_form::text;
        m.parts.clear();
    }
    /// The message after the edit, `m` being the message at `index`.
    [[nodiscard]] message applied_to(const message& m) const {
        if (replacement) return *replacement;
        message out = m;
        message_edit{index, std::nullopt, content}.apply_to(out);
        return out;
    }
};

namespace detail {
/// Applies `edits` (ascending, indices into `msgs`; those before `from` skipped) to `msgs`, moving each edit out,
/// and shifts `sums` (prefix sums over `msgs`, size msgs.size() + 1; empty: none kept) by each edit's difference
/// in one pass: the other messages' cached counts are kept, not recounted. `count(m)` counts one message.
template <class Count>
void apply_edits(std::span<message> msgs, std::span<std::int64_t> sums, std::span<message_edit> edits, std::size_t from,
                 Count&& count) {
    const bool counted = sums.size() == msgs.size() + 1;
    std::int64_t shift = 0;
    std::size_t next = from;  // sums before it are already shifted
    for (message_edit& e : edits) {
        if (e.index < from || e.index >= msgs.size()) continue;
        std::move(e).apply_to(msgs[e.index]);
        if (!counted) continue;
        for (; next <= e.index; ++next) sums[next] += shift;
        shift += count(msgs[e.index]) - (sums[e.index + 1] + shift - sums[e.index]);
    }
    if (counted)
        for (; next < sums.size(); ++next) sums[next] += shift;
}
} // namespace detail

/// What one rung of a ladder did (compressor/ladder.hpp), in the order they ran.
struct compression_step {
    std::string_view rung;         ///< the rung's name (`Rung::name`, else "compressor")
    bool ok = false;               ///< false: it failed, and the next rung ran
    bool changed = false;          ///< it changed the history (a rung with nothing to do: ok, unchanged)
    std::int64_t tokens_removed = 0;  ///< counted by compress_input::count when the caller gave it; -1 unknown
    std::string error;             ///< why it failed or was rejected
};

/// A compressor's answer. The new history is `history` with `edits` applied, then `prefix` followed by
/// what is left from `keep_from` on, so a truncation is just an offset (no message is copied), a summary is one
/// new message and a cleared tool result one replaced message. On failure (`ok == false`) the history is left as
/// it was; `used` counts the tokens spent either way. `ok` with no edit, no prefix and `keep_from == 0` is "nothing
/// to do".
struct compression_result {
    bool ok = false;
    std::size_t keep_from = 0;
    std::vector<message> prefix;
    std::vector<message_edit> edits;  ///< ascending indices into the input history, each at most once
    ania::usage used;
    std::string error;
    std::vector<compression_step> steps;  ///< filled by a ladder: what each rung did

    /// True when applying it changes the history.
    [[nodiscard]] bool changes() const noexcept { return keep_from > 0 || !prefix.empty() || !edits.empty(); }

    // Built member by member: a braced {true, from, {}, {}, {}} costs 5x more here (GCC 12 materialises
    // and moves the empty members), and truncation is on the hot path.
    [[nodiscard]] static compression_result keep_suffix(std::size_t from) noexcept {
        compression_result r;
        r.ok = true;
        r.keep_from = from;
        return r;
    }
    [[nodiscard]] static compression_result failure(std::string why, ania::usage u = {}) noexcept {
        compression_result r;
        r.used = u;
        r.error = std::move(why);
        return r;
    }
};

} // namespace ania
