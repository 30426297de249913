// ania/context/token_window.hpp -- the token-budget context window (SPEC §1 messageWindow).
// SPDX-License-Identifier: MIT
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <span>
#include <utility>
#include <vector>

#include <ania/concepts.hpp>
#include <ania/detail/linkage.hpp>
#include <ania/context/token_counter.hpp>
#include <ania/context/window_options.hpp>
#include <ania/message.hpp>
#include <ania/usage.hpp>
#include <ania/wire_cache.hpp>

namespace ania {

/// The history of one conversation with its token accounting. Counts are computed once per message, when it
/// enters, and kept as prefix sums, so budget questions are binary searches. Dropping the oldest messages
/// moves a start offset: message bodies are never copied (the storage is compacted, by moves, only once the
/// dropped part outweighs the live part).
///
/// Context size: after each request `record_request` keeps the prompt tokens of the request's *last* LLM
/// call (the real size; the sum over tool rounds over-counts). When the upstream reported no usage the
/// window estimates the size with its counter instead, so a server that never reports usage still cannot
/// grow the history without bound. Not thread-safe: one window belongs to one session, under its lock.
template <token_counter Counter = char_class_counter>
class token_window {
public:
    using counter_type = Counter;

    explicit token_window(window_options opt = {}, Counter counter = {}) : opt_(opt), counter_(std::move(counter)) {}

    // ---- contents -------------------------------------------------------------------------------------

    [[nodiscard]] std::span<const message> messages() const noexcept {
        return {msgs_.data() + start_, msgs_.size() - start_};
    }
    [[nodiscard]] std::size_t size() const noexcept { return msgs_.size() - start_; }
    [[nodiscard]] bool empty() const noexcept { return size() == 0; }
    [[nodiscard]] const message& operator[](std::size_t i) const noexcept { return msgs_[start_ + i]; }

    void append(message m) {
        compact_if_worth_it();
        const std::int64_t t = counter_.count(m);
        bytes_ += resident_bytes_of(m);
        msgs_.push_back(std::move(m));
        start_prefix();
        prefix_.push_back(prefix_.back() + t);
    }
    void append(std::vector<message>&& ms) {
        if (ms.empty()) return;
        compact_if_worth_it();
        start_prefix();
        detail::append_prefix_counts(ms, counter_, prefix_);
        for (const message& m : ms) bytes_ += resident_bytes_of(m);
        msgs_.insert(msgs_.end(), std::make_move_iterator(ms.begin()), std::make_move_iterator(ms.end()));
    }
    void append(std::span<const message> ms) {
        if (ms.empty()) return;
        compact_if_worth_it();
        start_prefix();
        detail::append_prefix_counts(ms, counter_, prefix_);
        for (const message& m : ms) bytes_ += resident_bytes_of(m);
        msgs_.insert(msgs_.end(), ms.begin(), ms.end());
    }
    /// Replaces the whole history (after loading it from a store).
    void assign(std::vector<message> ms) {
        msgs_ = std::move(ms);
        start_ = 0;
        stable_ = 0;
        wire_.reset();
        prefix_.clear();
        if (!msgs_.empty()) {
            start_prefix();
            detail::append_prefix_counts(msgs_, counter_, prefix_);
        }
        bytes_dirty_ = true;
    }
    void clear() noexcept {
        msgs_.clear();
        prefix_.clear();
        start_ = 0;
        stable_ = 0;
        wire_.release();  // its memory too: a cleared session holds nothing
        last_prompt_tokens_ = 0;
        bytes_ = 0;
        bytes_dirty_ = false;
    }

    /// Forgets the oldest `k` messages in O(1).
    void drop_front(std::size_t k) noexcept {
        stable_ = k < stable_ ? stable_ - k : 0;
        k = std::min(k, size());
        wire_.dropped_front(k);
        start_ += k;
        bytes_dirty_ = true;  // recounted when asked: a truncation stays O(1)
    }

    /// Applies a compressor's result: `r.edits` in place, then `r.prefix` followed by `messages()[r.keep_from..]`.
    void apply(compression_result&& r) {
        const std::size_t keep = std::min(r.keep_from, size());
        if (!r.edits.empty()) {
            if (!std::is_sorted(r.edits.begin(), r.edits.end(), [](const message_edit& a, const message_edit& b) { return a.index < b.index; }))
                std::stable_sort(r.edits.begin(), r.edits.end(), [](const message_edit& a, const message_edit& b) { return a.index < b.index; });
            replace_in_place(r.edits, keep);
            wire_.edited_from(std::max(r.edits.front().index, keep));
            stable_ = std::min<std::size_t>(stable_, r.edits.front().index);
        }
        if (r.prefix.empty()) {
            if (keep > 0) stable_ = 0;  // a cut: the head is new
            drop_front(keep);
            return;
        }
        wire_.replaced_head(keep, r.prefix.size());
        stable_ = r.prefix.size();  // the summaries at the head: what stays until the next compaction
        std::vector<message> next = std::move(r.prefix);
        std::vector<std::int64_t> sums{0};
        sums.reserve(next.size() + size() - keep + 1);
        for (const message& m : next) sums.push_back(sums.back() + counter_.count(m));
        next.reserve(next.size() + size() - keep);
        for (std::size_t i = start_ + keep; i < msgs_.size(); ++i) {
            sums.push_back(sums.back() + (prefix_[i + 1] - prefix_[i]));  // cached counts are reused
            next.push_back(std::move(msgs_[i]));
        }
        msgs_ = std::move(next);
        prefix_ = std::move(sums);
        start_ = 0;
        bytes_dirty_ = true;
    }

    /// The history's request bytes as written by the last client (chat_request::history_wire), or null when
    /// window_options::wire_cache is off. Kept in step with every change the window makes.
    [[nodiscard]] wire_cache* wire() noexcept { return opt_.wire_cache ? &wire_ : nullptr; }
    [[nodiscard]] const wire_cache& wire_bytes() const noexcept { return wire_; }

    /// How many messages at the head were put there by the last compaction (its summaries; with
    /// summary_options::stack_summaries, every stacked one): a prefix of the request that stays the same
    /// until the next compaction, where a provider's prompt cache is worth a breakpoint (chat_request::stable_prefix).
    [[nodiscard]] std::size_t stable_prefix() const noexcept { return std::min(stable_, size()); }

    /// One message in the units of context_tokens(): its count, calibrated. For a compressor's
    /// compress_input::count (input_count()).
    [[nodiscard]] std::int64_t estimate(const message& m) const { return scaled(counter_.count(m)); }
    /// estimate() as compress_input::count: valid while this window lives and is not moved.
    [[nodiscard]] compress_input::counter_fn input_count() const noexcept {
        return {[](const void* self, const message& m) { return static_cast<const token_window*>(self)->estimate(m); }, this};
    }

    // ---- memory -----------------------------------------------------------------------------------------

    /// About how many bytes the history holds in RAM: each message's text, parts, calls and ids, plus the
    /// message objects themselves (allocator overhead not included), plus the wire cache's buffers
    /// (wire_bytes().memory_bytes()). Kept up to date by appends; after a compression or a load the messages
    /// are recounted once, on the next call (O(n), as the compression was).
    [[nodiscard]] std::size_t resident_bytes() const noexcept { return message_bytes() + wire_.memory_bytes(); }
    /// resident_bytes() without the wire cache: what the messages themselves hold.
    [[nodiscard]] std::size_t message_bytes() const noexcept {
        if (bytes_dirty_) {
            std::size_t n = 0;
            for (const message& m : messages()) n += resident_bytes_of(m);
            bytes_ = n;
            bytes_dirty_ = false;
        }
        return bytes_;
    }
    /// One message's share of resident_bytes().
    [[nodiscard]] static std::size_t resident_bytes_of(const message& m) noexcept {
        std::size_t n = sizeof(message) + m.content.size();
        for (const content_part& p : m.parts) n += sizeof(content_part) + p.text.size() + p.url.size();
        for (const tool_call& c : m.tool_calls) n += sizeof(tool_call) + c.id.size() + c.name.size() + c.arguments.size();
        if (m.reasoning_content) n += m.reasoning_content->size();
        if (m.tool_call_id) n += m.tool_call_id->size();
        if (m.name) n += m.name->size();
        return n;
    }

    // ---- tokens ---------------------------------------------------------------------------------------

    /// Cached count of messages()[i].
    [[nodiscard]] std::int64_t tokens(std::size_t i) const noexcept { return prefix_[start_ + i + 1] - prefix_[start_ + i]; }
    /// Prefix sums over messages(): element j - element i = tokens of messages()[i..j). Size size() + 1.
    [[nodiscard]] std::span<const std::int64_t> prefix_tokens() const noexcept {
        if (prefix_.empty()) return {&no_tokens, 1};
        return {prefix_.data() + start_, prefix_.size() - start_};
    }
    /// What the caller sends besides the history (base prompt, tool schemas), in the counter's raw units.
    void set_overhead_tokens(std::int64_t raw) noexcept { overhead_ = raw; }
    /// Estimated prompt size of a request holding the history: raw counts + overhead, calibrated if the
    /// counter learns from usage.
    [[nodiscard]] std::int64_t estimated_tokens() const noexcept { return scaled(raw_tokens()); }

    /// After each request (SPEC §1): the last call's prompt tokens if any call reported usage, else the
    /// estimate. A calibrating counter learns from the reported size against its estimate of that request.
    void record_request(const turn_stats& s) {
        if (s.total.prompt_tokens && s.last_prompt_tokens > 0) {
            last_prompt_tokens_ = s.last_prompt_tokens;
            if constexpr (calibrating_token_counter<Counter>) {
                // The last call's prompt held everything but its own reply, the newest message.
                std::int64_t raw = raw_tokens();
                if (!empty() && (*this)[size() - 1].role == role::assistant) raw -= tokens(size() - 1);
                counter_.observe(raw, s.last_prompt_tokens);
            }
        } else {
            last_prompt_tokens_ = estimated_tokens();
        }
    }
    /// Inside a tool loop, before the next LLM call of the same request (only with
    /// options().check_inside_tool_loop; otherwise it does nothing and returns false). The next call's context
    /// is the last call's prompt (`last_call_prompt_tokens`, or the estimate when 0 = not reported) plus what
    /// was appended since: that call's reply and the tool results. Records it as the context size and returns
    /// whether maybe_compress should run before the call, so one long tool loop cannot overflow the context.
    bool note_tool_round(std::int64_t last_call_prompt_tokens, std::span<const message> appended_since) {
        if (!opt_.check_inside_tool_loop) return false;
        std::int64_t raw = 0;
        for (const message& m : appended_since) raw += counter_.count(m);
        const std::int64_t base = last_call_prompt_tokens > 0 ? last_call_prompt_tokens : estimated_tokens();
        last_prompt_tokens_ = base + scaled(raw);
        return compression_due();
    }

    /// The recorded context size: the last request's (0 when none was recorded: after a restart, after a
    /// compression).
    [[nodiscard]] std::int64_t last_prompt_tokens() const noexcept { return last_prompt_tokens_; }
    /// The context size the compression decision uses (SPEC §1): the recorded one, or, when none is recorded
    /// (0), the estimate. So a history loaded at start-up that is over budget compresses before the first
    /// request, and rounds of maybe_compress converge without a request in between.
    [[nodiscard]] std::int64_t context_tokens() const noexcept {
        return last_prompt_tokens_ > 0 ? last_prompt_tokens_ : estimated_tokens();
    }
    void set_last_prompt_tokens(std::int64_t n) noexcept { last_prompt_tokens_ = n; }
    void reset_last_prompt_tokens() noexcept { last_prompt_tokens_ = 0; }

    /// ratio x max_context_tokens, or -1 when compression is disabled.
    [[nodiscard]] std::int64_t threshold() const noexcept {
        if (opt_.max_context_tokens <= 0) return -1;
        return static_cast<std::int64_t>(opt_.compress_ratio * static_cast<double>(opt_.max_context_tokens));
    }
    /// The fixed part of every request: the base prompt and the tool schemas (set_overhead_tokens), estimated.
    [[nodiscard]] std::int64_t fixed_tokens() const noexcept { return scaled(overhead_); }
    /// True when the fixed part alone exceeds the threshold: no compression of the history can bring the
    /// context under it, so compressing at the threshold would pay a summary every turn for nothing.
    [[nodiscard]] bool fixed_over_threshold() const noexcept {
        const std::int64_t t = threshold();
        return t >= 0 && fixed_tokens() > t;
    }
    /// While fixed_over_threshold(): the history part may grow to ratio x what the model has left beside the
    /// fixed part (max_context_tokens - fixed), so that requests keep fitting the model; when the fixed part
    /// alone fills the model (nothing can fit), to max_context_tokens - threshold, only to keep it bounded.
    /// -1 otherwise (the threshold applies to the whole context, SPEC §1).
    [[nodiscard]] std::int64_t history_budget() const noexcept {
        if (!fixed_over_threshold()) return -1;
        const std::int64_t left = opt_.max_context_tokens - fixed_tokens();
        if (left > 0) return static_cast<std::int64_t>(opt_.compress_ratio * static_cast<double>(left));
        return opt_.max_context_tokens - threshold();
    }
    /// True when there is a history to compress and context_tokens() exceeds the threshold, or, while the
    /// fixed part alone is over the threshold, when the history part (the context less the fixed part) exceeds
    /// history_budget(): compressing what cannot help waits until the history has grown.
    [[nodiscard]] bool compression_due() const noexcept {
        if (threshold() < 0 || empty()) return false;
        if (!fixed_over_threshold()) return context_tokens() > threshold();
        return context_tokens() - fixed_tokens() > history_budget();
    }

    /// The context size compression_due() compares against: the threshold, or, while the fixed part alone is
    /// over it, the fixed part plus history_budget(). -1 when compression is disabled.
    [[nodiscard]] std::int64_t compression_target() const noexcept {
        if (threshold() < 0) return -1;
        if (!fixed_over_threshold()) return threshold();
        return fixed_tokens() + history_budget();
    }

    /// Dropped messages still held in storage (0 after a compaction): an observer for tests and tuning.
    [[nodiscard]] std::size_t dropped_in_storage() const noexcept { return start_; }

    [[nodiscard]] const window_options& options() const noexcept { return opt_; }
    [[nodiscard]] Counter& counter() noexcept { return counter_; }
    [[nodiscard]] const Counter& counter() const noexcept { return counter_; }

private:
    void start_prefix() {  // the leading 0 of the prefix sums, made with the first message
        if (prefix_.empty()) prefix_.push_back(0);
    }
    [[nodiscard]] std::int64_t raw_tokens() const noexcept {
        return prefix_.empty() ? overhead_ : prefix_.back() - prefix_[start_] + overhead_;
    }
    [[nodiscard]] std::int64_t scaled(std::int64_t raw) const noexcept {
        if constexpr (calibrating_token_counter<Counter>) return counter_.scale(raw);
        else return raw;
    }
    /// Edits at or past `from` (the rest is about to be dropped) replace their message, the sums shifted.
    void replace_in_place(std::vector<message_edit>& edits, std::size_t from) {
        detail::apply_edits(std::span<message>(msgs_.data() + start_, size()),
                            std::span<std::int64_t>(prefix_.data() + start_, prefix_.size() - start_), edits, from,
                            [this](const message& m) { return counter_.count(m); });
        bytes_dirty_ = true;
    }
    void compact_if_worth_it() {
        if (start_ < 1024 || start_ < size()) return;
        msgs_.erase(msgs_.begin(), msgs_.begin() + static_cast<std::ptrdiff_t>(start_));
        prefix_.erase(prefix_.begin(), prefix_.begin() + static_cast<std::ptrdiff_t>(start_));
        start_ = 0;
    }

    window_options opt_;
    Counter counter_;
    std::vector<message> msgs_;
    // prefix_[i] = tokens of msgs_[0..i); empty (no allocation) while the window is new or cleared: a session
    // cache makes and drops thousands of windows, and a fresh session's costs no block.
    std::vector<std::int64_t> prefix_;
    wire_cache wire_;
    static constexpr std::int64_t no_tokens = 0;  // prefix_tokens() while prefix_ is empty
    std::size_t start_ = 0;             // messages before it are dropped
    std::size_t stable_ = 0;            // see stable_prefix()
    std::int64_t overhead_ = 0;
    std::int64_t last_prompt_tokens_ = 0;
    mutable std::size_t bytes_ = 0;
    mutable bool bytes_dirty_ = false;
};

#if !ANIA_HEADER_ONLY
extern template class token_window<char_class_counter>;  // in the compiled library
#endif


} // namespace ania
