// ania/compressor/clear_tool_results.hpp -- the cheap rung: replace old tool results by a placeholder.
// SPDX-License-Identifier: MIT
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

#include <ania/concepts.hpp>
#include <ania/message.hpp>
#include <ania/text/shared_text.hpp>

namespace ania {

/// What clear_tool_results clears and when (Anthropic's `clear_tool_uses_20250919` context edit, LangChain's
/// ClearToolUsesEdit). Config: `compressor.clear_tool_results.*`.
struct clear_tool_results_options {
    bool enabled = true;  ///< false: the rung does nothing (default_compressor's, unless configured)
    /// Start clearing once the context passes this many tokens, before the summary is due; 0 = when the
    /// compression is due (the threshold). A trigger above the threshold only delays the clearing.
    std::int64_t trigger = 0;
    std::size_t keep = 3;  ///< the newest tool results kept as they are
    std::vector<std::string> exclude;  ///< tools whose results are never cleared (by function name)
    /// Clear nothing unless at least this many tokens go: every clearing rewrites the prompt from the first
    /// cleared result on, which costs the provider's prompt cache from there.
    std::int64_t clear_at_least = 0;
    bool clear_arguments = false;  ///< also replace the cleared calls' arguments by `{}`
    /// What a cleared result says instead (shared_text: every edit and every session's copy share it).
    shared_text placeholder = shared_text::literal("[tool result cleared to save context]");
};

/// SPEC-compatible first rung of a ladder (compressor/ladder.hpp): no model call, no lost turn. Every tool
/// result older than the newest `keep` (and not from an `exclude`d tool, and not already cleared) is replaced
/// by a tool message with the same `tool_call_id` and the placeholder as content, so every call keeps its
/// result and the transcript stays valid; a result no bigger than the placeholder is left as it is. Answers the edits (compression_result::edits), or "nothing to do"
/// when disabled, under the trigger, or when less than `clear_at_least` tokens would go. O(n) in the history
/// plus the cleared messages' metadata; the cleared texts are not read.
class clear_tool_results {
public:
    static constexpr std::string_view name = "clear_tool_results";

    clear_tool_results() = default;
    explicit clear_tool_results(clear_tool_results_options opt) : opt_(std::move(opt)) {}

    [[nodiscard]] compression_result compress(const compress_input& in) const {
        compression_result r;
        r.ok = true;  // nothing to do is not a failure: the next rung runs
        const auto h = in.history;
        if (!opt_.enabled || h.empty()) return r;
        if (opt_.trigger > 0 && in.context_tokens >= 0 && in.context_tokens <= opt_.trigger &&
            (in.target_tokens < 0 || in.context_tokens <= in.target_tokens))
            return r;
        // The oldest result kept: skip the newest `keep` tool results.
        std::size_t end = h.size(), kept = 0;
        while (end > 0 && kept < opt_.keep)
            if (h[--end].role == role::tool) ++kept;
        if (kept < opt_.keep) return r;  // fewer results than `keep`: nothing is old enough
        std::int64_t removed = 0;
        // What a placeholder costs, counted once: the counters do not count ids, and the window recounts each
        // edited message exactly when it applies the edits.
        message proto;
        proto.role = role::tool;
        proto.content = opt_.placeholder.view();
        const std::int64_t placeholder_tokens = in.count ? in.count(proto) : approx_tokens(opt_.placeholder);
        r.edits.reserve(end / 8);
        constexpr std::size_t none = static_cast<std::size_t>(-1);
        std::size_t calls_at = none;   // the assistant message whose calls the results answer
        std::size_t calls_edit = none;  // its edit in r.edits (clear_arguments), made by its first cleared result
        call_finder finder;
        for (std::size_t i = 0; i < end; ++i) {
            const message& m = h[i];
            if (m.role == role::assistant && m.has_tool_calls()) {
                calls_at = i, calls_edit = none;
                finder.reset(&m);
            }
            if (m.role != role::tool || is_cleared(m)) continue;
            const std::int64_t gain = tokens_of(in, i) - placeholder_tokens;
            if (gain <= 0) continue;  // a result no bigger than the placeholder stays: clearing it would cost
            const tool_call* call = (opt_.exclude.empty() && !opt_.clear_arguments) ? nullptr : finder.find(m);
            if (excluded(m, call)) continue;
            if (opt_.clear_arguments && call && call->arguments != "{}") {
                if (calls_edit == none) {  // the assistant message precedes its results: the edits stay ascending
                    calls_edit = r.edits.size();
                    r.edits.push_back({calls_at, h[calls_at]});
                }
                const auto j = static_cast<std::size_t>(call - h[calls_at].tool_calls.data());  // the same position
                r.edits[calls_edit].replacement->tool_calls[j].arguments = "{}";
            }
            removed += gain;
            r.edits.push_back({i, std::nullopt, opt_.placeholder});
        }
        if (removed < opt_.clear_at_least || r.edits.empty()) r.edits.clear();
        return r;
    }

    /// Where an early activation starts (maybe_compress asks; 0 = at the threshold).
    [[nodiscard]] std::int64_t trigger_tokens() const noexcept { return opt_.enabled ? opt_.trigger : 0; }
    [[nodiscard]] const clear_tool_results_options& options() const noexcept { return opt_; }
    [[nodiscard]] clear_tool_results_options& options() noexcept { return opt_; }

private:
    [[nodiscard]] bool is_cleared(const message& m) const noexcept {
        return m.form == content_form::text && std::string_view(m.content) == opt_.placeholder.view();
    }
    /// The calls of the exchange's assistant message, looked up by id: results usually come in the calls'
    /// order (a cursor finds each in O(1)); in another order, a hash index is built once for the message, so a
    /// model sending 80,000 calls costs O(calls), not O(calls^2).
    class call_finder {
    public:
        void reset(const message* calls) noexcept {
            calls_ = calls;
            next_ = 0;
            index_.clear();
        }
        [[nodiscard]] const tool_call* find(const message& result) {
            if (!calls_ || !result.tool_call_id) return nullptr;
            const std::vector<tool_call>& cs = calls_->tool_calls;
            const std::string& id = *result.tool_call_id;
            if (next_ < cs.size() && cs[next_].id == id) return &cs[next_++];
            if (index_.empty()) {
                if (cs.size() <= 16) {  // a linear look is cheaper than a table for a few calls
                    for (const tool_call& c : cs)
                        if (c.id == id) return &c;
                    return nullptr;
                }
                index_.reserve(cs.size());
                for (const tool_call& c : cs) index_.emplace(std::string_view(c.id), &c);
            }
            const auto it = index_.find(std::string_view(id));
            return it == index_.end() ? nullptr : it->second;
        }

    private:
        const message* calls_ = nullptr;
        std::size_t next_ = 0;
        std::unordered_map<std::string_view, const tool_call*> index_;
    };

    [[nodiscard]] bool excluded(const message& m, const tool_call* call) const noexcept {
        if (opt_.exclude.empty()) return false;
        const std::string_view fn = call ? std::string_view(call->name) : m.name ? std::string_view(*m.name) : std::string_view();
        return std::find(opt_.exclude.begin(), opt_.exclude.end(), fn) != opt_.exclude.end();
    }
    [[nodiscard]] static std::int64_t tokens_of(const compress_input& in, std::size_t i) {
        if (in.prefix_tokens.size() == in.history.size() + 1) return in.prefix_tokens[i + 1] - in.prefix_tokens[i];
        return in.count ? in.count(in.history[i]) : approx_tokens(in.history[i].content);
    }
    [[nodiscard]] static std::int64_t approx_tokens(std::string_view s) noexcept {
        return static_cast<std::int64_t>(s.size() / 4 + 1);
    }

    clear_tool_results_options opt_;
};

static_assert(compressor<clear_tool_results>);

} // namespace ania
