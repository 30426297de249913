// ania/chat_request.hpp -- what one model call is given: the messages as a view of up to three segments (message_sequence), the tools, the stop token.
// SPDX-License-Identifier: MIT
#pragma once

#include <cstddef>
#include <iterator>
#include <span>
#include <stop_token>
#include <vector>

#include <ania/message.hpp>

namespace ania {

class wire_cache;  // <ania/wire_cache.hpp>
struct tool;  // <ania/tool.hpp>: a request refers to the agent's tools, it does not need their definition here

/// The messages of a request as up to three contiguous segments, read in order: the base prompt, the
/// history (the window's own storage) and this turn. An agent sends a history of 10,000 messages without
/// copying it (SPEC §1 makes history the bulk of every request); a client walks it or serialises it once.
class message_sequence {
public:
    message_sequence() noexcept = default;
    message_sequence(std::span<const message> only) noexcept : seg_{only, {}, {}} {}  // NOLINT: a span is a sequence
    message_sequence(std::span<const message> a, std::span<const message> b, std::span<const message> c = {}) noexcept
        : seg_{a, b, c} {}

    class iterator {
    public:
        using iterator_category = std::forward_iterator_tag;
        using value_type = message;
        using difference_type = std::ptrdiff_t;
        using pointer = const message*;
        using reference = const message&;
        iterator() noexcept = default;
        reference operator*() const noexcept { return s_->seg_[k_][i_]; }
        pointer operator->() const noexcept { return &**this; }
        iterator& operator++() noexcept {
            if (++i_ == s_->seg_[k_].size()) skip();
            return *this;
        }
        iterator operator++(int) noexcept {
            iterator t = *this;
            ++*this;
            return t;
        }
        friend bool operator==(const iterator& a, const iterator& b) noexcept { return a.k_ == b.k_ && a.i_ == b.i_; }

    private:
        friend class message_sequence;
        iterator(const message_sequence* s, std::size_t k) noexcept : s_(s), k_(k) {
            if (k_ < 3 && s_->seg_[k_].empty()) skip();
        }
        void skip() noexcept {
            i_ = 0;
            while (++k_ < 3 && s_->seg_[k_].empty()) {}
        }
        const message_sequence* s_ = nullptr;
        std::size_t k_ = 3, i_ = 0;
    };

    [[nodiscard]] iterator begin() const noexcept { return {this, 0}; }
    [[nodiscard]] iterator end() const noexcept { return {this, 3}; }
    [[nodiscard]] std::size_t size() const noexcept { return seg_[0].size() + seg_[1].size() + seg_[2].size(); }
    [[nodiscard]] bool empty() const noexcept { return size() == 0; }
    [[nodiscard]] const message& operator[](std::size_t i) const noexcept {
        for (const auto& s : seg_) {
            if (i < s.size()) return s[i];
            i -= s.size();
        }
        return seg_[2][i];  // out of range: as a span's operator[] (undefined)
    }
    [[nodiscard]] const message& front() const noexcept { return *begin(); }
    [[nodiscard]] const message& back() const noexcept {
        return !seg_[2].empty() ? seg_[2].back() : !seg_[1].empty() ? seg_[1].back() : seg_[0].back();
    }
    /// The segments (some may be empty), for a client that serialises span by span.
    [[nodiscard]] std::span<const std::span<const message>, 3> segments() const noexcept { return seg_; }
    /// A copy as one vector (tests, a client that must own the request).
    [[nodiscard]] std::vector<message> to_vector() const { return {begin(), end()}; }

private:
    std::span<const message> seg_[3];
};

/// One chat-completions request: the messages, the tools the model may call (empty: none) and the turn's
/// stop token (a client aborts a transfer when it is requested). Everything is borrowed for the call.
struct chat_request {
    message_sequence messages;
    std::span<const tool> tools{};
    std::stop_token stop{};
    /// How many messages at the start of the history segment (the second) stay the same across the next
    /// turns and compactions (token_window::stable_prefix): where a client that places prompt-cache
    /// breakpoints (Anthropic's cache_control) puts one more. 0 = none known.
    std::size_t stable_prefix = 0;
    /// The history segment's request bytes, kept by its window (token_window::wire()): a client that writes
    /// the history message by message fills it once and then sends it as it is, so a request costs the turn,
    /// not the history. Null: write everything. The segment must be exactly that window's messages, and one
    /// request with it is sent at a time (the session's turn).
    wire_cache* history_wire = nullptr;
};

} // namespace ania
