// ania/compressor/ladder.hpp -- compressors tried in order, each only while the context is still over.
// SPDX-License-Identifier: MIT
#pragma once

#include <cstddef>
#include <cstdint>
#include <exception>
#include <string>
#include <string_view>
#include <tuple>
#include <type_traits>
#include <utility>
#include <vector>

#include <ania/concepts.hpp>
#include <ania/message.hpp>

namespace ania {

namespace detail {

template <class R>
constexpr std::string_view rung_name() noexcept {
    if constexpr (requires { R::name; }) return std::string_view(R::name);
    else return "compressor";
}

/// What the rungs before have made of the history: the input the next rung is given.
struct ladder_state {
    compress_input in;
    std::vector<message> edited;        // the history with the edits applied, once a later rung needs it
    std::vector<std::int64_t> sums;     // its prefix sums
    std::int64_t tokens = -1;           // the context now (-1 unknown)
};

/// The tokens `edits` remove from `in` (the cached count of the old message less the count of the new).
[[nodiscard]] inline std::int64_t edits_removed(const compress_input& in, const std::vector<message_edit>& edits) {
    if (!in.count || in.prefix_tokens.size() != in.history.size() + 1) return -1;
    std::int64_t removed = 0;
    std::string_view counted_text;  // a text edit's count, counted once per text (the placeholder)
    std::int64_t text_tokens = -1;
    for (const message_edit& e : edits) {
        if (e.index >= in.history.size()) continue;
        std::int64_t now;
        if (e.replacement || !e.content) {
            now = in.count(e.applied_to(in.history[e.index]));
        } else if (text_tokens >= 0 && counted_text.data() == e.content->data() && counted_text.size() == e.content->size()) {
            now = text_tokens;
        } else {
            now = text_tokens = in.count(e.applied_to(in.history[e.index]));
            counted_text = e.content->view();
        }
        removed += in.prefix_tokens[e.index + 1] - in.prefix_tokens[e.index] - now;
    }
    return removed;
}

/// The input with `edits` applied, for the next rung (the history copied once; the sums shifted, not recounted).
inline void edit_input(ladder_state& st, const std::vector<message_edit>& edits) {
    const compress_input& in = st.in;
    std::vector<message> h(in.history.begin(), in.history.end());
    std::vector<std::int64_t> sums;
    if (in.count) sums.assign(in.prefix_tokens.begin(), in.prefix_tokens.end());
    if (sums.size() != h.size() + 1) sums.clear();  // unknown: a rung counts for itself
    std::vector<message_edit> mine(edits);  // the rung's edits are kept for the result
    detail::apply_edits(h, sums, mine, 0, in.count);
    st.edited = std::move(h);
    st.sums = std::move(sums);
    st.in.history = st.edited;
    st.in.prefix_tokens = st.sums;
}

} // namespace detail

/// Compressors tried in order (SPEC §1's two rungs are `ladder<llm_summary<C>, truncate_oldest_half>`, which is
/// with_fallback; a cheap first rung, clear_tool_results, makes the summary unnecessary for a tool-heavy bot):
/// - a rung that fails (or throws) is logged in the result's `error` and the next one runs, on the same input;
/// - a rung that only edits messages in place (clear_tool_results) keeps its edits, and the next rung runs on
///   the edited history — only while the context is still over `compress_input::target_tokens` (when the caller
///   gave the sizes; without them every rung runs until one compacts);
/// - a rung that compacts (a summary, a cut) ends the ladder: the window is re-measured by the next turn, and
///   maybe_compress runs again if it is still over (SPEC §1's convergence).
/// Every rung's outcome is in `compression_result::steps`. The edits of a rung are kept when a later one
/// compacts only for the messages it keeps. Not thread-safe (one agent's compressor), as its rungs.
template <compressor... Rungs>
    requires(sizeof...(Rungs) > 0)
class ladder {
public:
    explicit ladder(Rungs... rungs) : rungs_(std::move(rungs)...) {}
    ladder()
        requires(std::is_default_constructible_v<Rungs> && ...)
    = default;

    [[nodiscard]] compression_result compress(const compress_input& in) {
        compression_result out;
        detail::ladder_state st{in, {}, {}, in.context_tokens};
        bool done = false;
        std::string errors;
        [&]<std::size_t... I>(std::index_sequence<I...>) {
            (run<I>(st, out, done, errors), ...);
        }(std::index_sequence_for<Rungs...>{});
        out.ok = out.ok || !out.edits.empty();
        out.error = std::move(errors);
        return out;
    }

    template <std::size_t I>
    [[nodiscard]] auto& rung() noexcept { return std::get<I>(rungs_); }
    template <std::size_t I>
    [[nodiscard]] const auto& rung() const noexcept { return std::get<I>(rungs_); }

    /// The first rung's early trigger, when it has one (maybe_compress asks).
    [[nodiscard]] std::int64_t trigger_tokens() const noexcept {
        using first = std::tuple_element_t<0, std::tuple<Rungs...>>;
        if constexpr (requires(const first& f) { f.trigger_tokens(); }) return std::get<0>(rungs_).trigger_tokens();
        else return 0;
    }

private:
    template <std::size_t I>
    void run(detail::ladder_state& st, compression_result& out, bool& done, std::string& errors) {
        if (done) return;
        const bool under = st.in.target_tokens >= 0 && st.tokens >= 0 && st.tokens <= st.in.target_tokens;
        // Under the target (an edit brought it there, or an early trigger called the ladder below it): the
        // dearer rungs are not needed.
        if (I > 0 && under) {
            done = true;
            return;
        }
        using R = std::tuple_element_t<I, std::tuple<Rungs...>>;
        compression_step step;
        step.rung = detail::rung_name<R>();
        compression_result r;
        try {
            r = std::get<I>(rungs_).compress(st.in);
        } catch (const std::exception& e) {
            r = compression_result::failure(std::string(step.rung) + " threw: " + e.what());
        } catch (...) {
            r = compression_result::failure(std::string(step.rung) + " threw");
        }
        out.used += r.used;
        step.ok = r.ok;
        step.changed = r.ok && r.changes();
        step.error = r.error;
        if (!r.ok) {
            if (!errors.empty()) errors += "; ";
            errors += r.error.empty() ? std::string(step.rung) + " failed" : r.error;
            step.tokens_removed = 0;
            out.steps.push_back(std::move(step));
            return;
        }
        if (!r.error.empty()) {  // a nested fallback said why its primary failed
            if (!errors.empty()) errors += "; ";
            errors += r.error;
        }
        for (compression_step& s : r.steps) out.steps.push_back(std::move(s));  // a nested ladder's own
        if (r.keep_from > 0 || !r.prefix.empty()) {  // a compaction: the last rung that runs
            step.tokens_removed = -1;
            out.steps.push_back(std::move(step));
            out.ok = true;
            out.keep_from = r.keep_from;
            out.prefix = std::move(r.prefix);
            merge_edits(out, std::move(r.edits));
            std::erase_if(out.edits, [&](const message_edit& e) { return e.index < out.keep_from; });
            done = true;
            return;
        }
        out.ok = true;
        if (r.edits.empty()) {  // nothing to do here
            out.steps.push_back(std::move(step));
            return;
        }
        const std::int64_t removed = detail::edits_removed(st.in, r.edits);
        step.tokens_removed = removed;
        out.steps.push_back(std::move(step));
        if (st.tokens >= 0 && removed >= 0) st.tokens -= removed;
        else st.tokens = -1;
        if constexpr (I + 1 < sizeof...(Rungs)) {
            const bool now_under = st.in.target_tokens >= 0 && st.tokens >= 0 && st.tokens <= st.in.target_tokens;
            if (!now_under) detail::edit_input(st, r.edits);  // the next rung sees the edited history
        }
        merge_edits(out, std::move(r.edits));
    }

    /// Later edits of the same message replace earlier ones; the result stays ascending.
    static void merge_edits(compression_result& out, std::vector<message_edit>&& more) {
        if (more.empty()) return;
        if (out.edits.empty()) {
            out.edits = std::move(more);
            return;
        }
        std::vector<message_edit> merged;
        merged.reserve(out.edits.size() + more.size());
        std::size_t a = 0, b = 0;
        while (a < out.edits.size() || b < more.size()) {
            if (b == more.size() || (a < out.edits.size() && out.edits[a].index < more[b].index)) {
                merged.push_back(std::move(out.edits[a++]));
            } else {
                if (a < out.edits.size() && out.edits[a].index == more[b].index) ++a;  // superseded
                merged.push_back(std::move(more[b++]));
            }
        }
        out.edits = std::move(merged);
    }

    std::tuple<Rungs...> rungs_;
};

static_assert(compressor<ladder<compressor_archetype, compressor_archetype>>);

} // namespace ania
