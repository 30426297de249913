// ania/http/sse.hpp -- a decoder of server-sent events (text/event-stream) that accepts any chunking.
// SPDX-License-Identifier: MIT
//
// A streaming model answer arrives as SSE over however many network reads the kernel likes: a read may end
// inside a line, between the \r and the \n of a line end, or inside a UTF-8 sequence. The decoder keeps the
// unfinished line and dispatches an event at each blank line, per the WHATWG rules that matter here: lines end
// in \n, \r\n or \r; a line starting with ':' is a comment; `data:` lines of one event are joined with '\n';
// one space after the colon is dropped; a field without a colon has an empty value.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

namespace ania::http {

/// One dispatched event. `data` is the joined `data:` lines; `event` the `event:` field (empty: "message").
struct sse_event {
    std::string_view event;
    std::string_view data;
};

/// A keep-alive's data: empty or only blanks ("data:" or "data: " lines that proxies and relays send). The
/// SSE spec dispatches such an event; no model protocol gives it a meaning, so it is never parsed.
[[nodiscard]] inline bool is_keep_alive(std::string_view data) noexcept {
    return data.find_first_not_of(" \t\r\n") == std::string_view::npos;
}

/// Feed bytes in any pieces; `on_event(const sse_event&)` is called for each complete event, in order.
/// Linear in the bytes fed, whatever the chunking: a partial line is scanned once, not again at each feed.
/// A line longer than `max_line` bytes fails the stream (feed returns false) instead of growing without bound.
class sse_decoder {
public:
    explicit sse_decoder(std::size_t max_line = std::size_t(64) << 20) : max_line_(max_line) {}

    template <class OnEvent>
    bool feed(std::string_view bytes, OnEvent&& on_event) {
        if (failed_) return false;
        std::size_t i = 0;
        if (skip_lf_ && !bytes.empty()) {  // the \n of a \r\n split across two reads
            if (bytes[0] == '\n') ++i;
            skip_lf_ = false;
        }
        while (i < bytes.size()) {
            // The end of the current line within this read, if any.
            std::size_t j = i;
            while (j < bytes.size() && bytes[j] != '\n' && bytes[j] != '\r') ++j;
            if (j == bytes.size()) {
                line_.append(bytes.substr(i));
                if (line_.size() > max_line_) return fail();
                return !failed_;
            }
            std::string_view line;
            if (line_.empty()) {
                line = bytes.substr(i, j - i);
            } else {
                line_.append(bytes.substr(i, j - i));
                line = line_;
            }
            if (line.size() > max_line_) return fail();
            take_line(line, on_event);
            line_.clear();
            if (bytes[j] == '\r') {
                if (j + 1 < bytes.size()) {
                    if (bytes[j + 1] == '\n') ++j;
                } else {
                    skip_lf_ = true;
                }
            }
            i = j + 1;
        }
        return !failed_;
    }

    /// The end of the stream: an event not closed by a blank line is dispatched only if `dispatch_unterminated`
    /// (the spec drops it; some servers omit the last blank line).
    template <class OnEvent>
    void finish(OnEvent&& on_event, bool dispatch_unterminated = true) {
        if (!line_.empty()) {
            const std::string line = std::move(line_);
            line_.clear();
            take_line(line, on_event);
        }
        if (dispatch_unterminated && has_data_) dispatch(on_event);
        reset_event();
    }

    /// Bytes held for an unfinished line or event.
    [[nodiscard]] std::size_t buffered() const noexcept { return line_.size() + data_.size(); }

private:
    bool fail() noexcept {
        failed_ = true;
        line_.clear();
        return false;
    }

    template <class OnEvent>
    void take_line(std::string_view line, OnEvent& on_event) {
        if (line.empty()) {
            if (has_data_) dispatch(on_event);
            reset_event();
            return;
        }
        if (line.front() == ':') return;  // a comment (keep-alive)
        const std::size_t colon = line.find(':');
        const std::string_view field = line.substr(0, colon);
        std::string_view value;
        if (colon != std::string_view::npos) {
            value = line.substr(colon + 1);
            if (!value.empty() && value.front() == ' ') value.remove_prefix(1);
        }
        if (field == "data") {
            if (has_data_) data_.push_back('\n');
            data_.append(value);
            has_data_ = true;
        } else if (field == "event") {
            event_.assign(value);
        }  // id, retry and unknown fields: not needed by a model stream
    }

    template <class OnEvent>
    void dispatch(OnEvent& on_event) {
        on_event(sse_event{event_, data_});
    }

    void reset_event() {
        data_.clear();
        event_.clear();
        has_data_ = false;
    }

    std::string line_;
    std::string data_;
    std::string event_;
    std::size_t max_line_;
    bool has_data_ = false;
    bool skip_lf_ = false;
    bool failed_ = false;
};

} // namespace ania::http
