// ania/wire_cache.hpp -- the committed history's request bytes, written once per message and kept with the
// window (wire_cache), and a request body in pieces that borrows them (wire_body).
// SPDX-License-Identifier: MIT
//
// Every request of a conversation carries its whole history, and every committed message of a window is
// immutable: writing 10,000 messages' JSON again for each turn makes a turn's cost grow with the history.
// The window keeps each message's wire bytes once written, back to back in one buffer, so that the history
// part of a body is one view (no copy at all when the transport reads the pieces itself). The window tells
// the cache what it changes (a drop from the front, an edit, a compaction's new head); everything else is
// appended lazily by the client that writes the request, under the key of its format.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include <ania/message.hpp>

namespace ania {

/// A request body in three pieces, sent in order: the request's own head (model, base prompt, …), a view of
/// the history's cached bytes, the request's own tail (this turn, tools, switches). The view borrows a
/// wire_cache: valid until its window changes (for the duration of the call that made it).
struct wire_body {
    std::string head;
    std::string_view shared;
    std::string tail;

    [[nodiscard]] std::size_t size() const noexcept { return head.size() + shared.size() + tail.size(); }
    [[nodiscard]] std::array<std::string_view, 3> pieces() const noexcept { return {head, shared, tail}; }
    /// One buffer (memcpy of the pieces): for a transport that wants contiguous bytes, and for tests.
    [[nodiscard]] std::string flatten() const {
        std::string out;
        out.reserve(size());
        out.append(head).append(shared).append(tail);
        return out;
    }
};

/// The wire bytes of a window's history, one fragment per message (each followed by ','), for window
/// indices [first(), first() + size()). The window's own head before first() (a compaction's summaries,
/// written per request: they are few) is not cached. Not thread-safe: it belongs to one window, under its
/// session's lock, and is filled during that session's model call.
///
/// A format whose bytes for one message depend on the messages before it (Anthropic's: consecutive messages
/// of one role are one message there, and system text is lifted out) keeps the history as one run instead
/// (sync_run): the whole segment from its first message, with the writer's state after the last one.
///
/// Memory: the fragments' bytes (about the message's JSON: its text plus ~30 bytes of keys) and 8 bytes of
/// offset per message; bytes of dropped messages are reclaimed once they pass a quarter of the buffer.
class wire_cache {
public:
    /// What a run's writer carries from one message to the next (its meaning is the writer's): a few flags,
    /// and text it lifts out of the run (Anthropic: the system messages' text).
    struct run_state {
        std::uint64_t flags = 0;
        std::string side;
        friend bool operator==(const run_state&, const run_state&) = default;
    };

    /// The fragments of history[first(), history.size()) under `key` (a writer's format: another key
    /// starts over), writing the missing ones with `write(out, message)`; `head` receives first().
    template <class Write>
    [[nodiscard]] std::string_view sync(std::uint64_t key, std::span<const message> history, Write&& write, std::size_t& head) {
        if (key != key_ || lo_ + live() > history.size()) {  // another format, or a history this cache does not describe
            reset();
            key_ = key;
        }
        bytes_.resize(ends_.empty() ? 0 : ends_.back());  // what a write that threw left behind
        for (std::size_t i = lo_ + live(); i < history.size(); ++i) {
            write(bytes_, history[i]);
            bytes_.push_back(',');
            ends_.push_back(bytes_.size());
        }
        head = lo_;
        return std::string_view(bytes_).substr(live_begin());
    }

    /// The run of history[0, history.size()) under `key`: `prologue` (bytes that precede the segment, such
    /// as the messages before it) then each message's bytes as `write(out, index, message, state)` writes
    /// them, from `start`. Kept while the key, the prologue and `start` are the same and the history only
    /// grew; anything else the window does to it (a drop, an edit, a compaction) starts it over, at the
    /// next request: O(history) once. `end` receives the state after the last message. A write that throws
    /// leaves the cache empty. Not for fragment()/sync(): one cache holds one mode at a time.
    template <class Write>
    [[nodiscard]] std::string_view sync_run(std::uint64_t key, std::string_view prologue, const run_state& start,
                                            std::span<const message> history, Write&& write, const run_state*& end) {
        try {
            if (!run_ || key != key_ || lo_ != 0 || live() > history.size() || prologue_ != prologue || start_ != start) {
                reset();
                bytes_.assign(prologue);  // (a breakpoint may later change its last block: compared with the copy)
                prologue_.assign(prologue);
                start_ = start;
                state_ = start;
                key_ = key;
                run_ = true;
            }
            for (std::size_t i = live(); i < history.size(); ++i) {
                write(bytes_, i, history[i], state_);
                ends_.push_back(bytes_.size());
            }
        } catch (...) {
            reset();
            throw;
        }
        end = &state_;
        return bytes_;
    }

    // ---- what the window tells it --------------------------------------------------------------------

    /// The oldest `k` messages of the window went.
    void dropped_front(std::size_t k) noexcept {
        if (run_ && k > 0) {
            reset();
            return;
        }
        if (k <= lo_) {
            lo_ -= k;
            return;
        }
        const std::size_t d = k - lo_;
        lo_ = 0;
        if (d >= live()) {
            reset();
            return;
        }
        head_ += d;
        compact_if_worth_it();
    }
    /// Window message `i` changed in place (and maybe every one after it).
    void edited_from(std::size_t i) noexcept {
        if (run_) {  // the messages after it may be written differently too
            reset();
            return;
        }
        if (i < lo_) return;  // the uncached head is written per request
        if (i - lo_ >= live()) return;
        ends_.resize(head_ + (i - lo_));
        bytes_.resize(ends_.empty() || ends_.size() == head_ ? live_begin() : ends_.back());
    }
    /// A compaction: the first `keep` messages went and `added` new ones now lead the window.
    void replaced_head(std::size_t keep, std::size_t added) noexcept {
        if (run_) {
            reset();
            return;
        }
        dropped_front(keep);
        lo_ += added;
    }
    /// Everything is forgotten and the memory given back (a clear: the session holds nothing).
    void release() noexcept {
        std::string().swap(bytes_);  // a move-assignment from an empty string would keep the buffer
        std::vector<std::size_t>().swap(ends_);
        head_ = lo_ = 0;
        forget_run();
        std::string().swap(prologue_);
        std::string().swap(start_.side);
        std::string().swap(state_.side);
    }
    /// Everything is forgotten, the buffers kept for what comes next (a load, another format).
    void reset() noexcept {
        bytes_.clear();
        ends_.clear();
        head_ = lo_ = 0;
        forget_run();
    }

    // ---- observers -------------------------------------------------------------------------------------

    /// The fragment of window message `i` (first() <= i < first() + size()), without its comma: for a
    /// writer that assembles the body message by message instead of sending the cache as one view (not in
    /// run mode).
    [[nodiscard]] std::string_view fragment(std::size_t i) const noexcept {
        const std::size_t k = head_ + (i - lo_);
        const std::size_t b = k == 0 ? 0 : ends_[k - 1];
        return std::string_view(bytes_).substr(b, ends_[k] - b - 1);
    }
    /// The window index of the first cached fragment.
    [[nodiscard]] std::size_t first() const noexcept { return lo_; }
    /// Fragments held.
    [[nodiscard]] std::size_t size() const noexcept { return live(); }
    /// Heap bytes held: the buffer and the offsets, dropped bytes not yet reclaimed included.
    [[nodiscard]] std::size_t memory_bytes() const noexcept {
        const auto heap = [](const std::string& b) { return b.capacity() > std::string().capacity() ? b.capacity() : 0; };  // not the inline buffer
        return heap(bytes_) + ends_.capacity() * sizeof(std::size_t) + heap(prologue_) + heap(start_.side) + heap(state_.side);
    }

private:
    [[nodiscard]] std::size_t live() const noexcept { return ends_.size() - head_; }
    [[nodiscard]] std::size_t live_begin() const noexcept { return head_ == 0 ? 0 : ends_[head_ - 1]; }
    /// Dropped bytes are moved out once they are a quarter of the buffer: each compaction moves at most
    /// four times the bytes dropped since the last, so a drop stays O(1) amortised.
    void compact_if_worth_it() noexcept {
        const std::size_t dead = live_begin();
        if (dead * 4 < bytes_.size()) return;
        bytes_.erase(0, dead);
        ends_.erase(ends_.begin(), ends_.begin() + static_cast<std::ptrdiff_t>(head_));
        for (std::size_t& e : ends_) e -= dead;
        head_ = 0;
    }

    void forget_run() noexcept {
        run_ = false;
        prologue_.clear();
        start_.flags = state_.flags = 0;
        start_.side.clear();
        state_.side.clear();
    }

    std::uint64_t key_ = 0;
    bool run_ = false;         // sync_run's mode: bytes_ is [prologue][message 0]...[message n-1], no commas
    std::string prologue_;      // run mode: a copy of the prologue, which begins bytes_
    run_state start_, state_;   // run mode: the writer's state before the first message, after the last
    std::size_t lo_ = 0;    // window index of the first cached fragment
    std::size_t head_ = 0;  // ends_ index of the first live fragment
    std::string bytes_;
    std::vector<std::size_t> ends_;  // ends_[i]: the offset past fragment i's comma
};

} // namespace ania
