// ania/text/shared_text.hpp -- an immutable text that is free to copy: the options' default texts.
// SPDX-License-Identifier: MIT
//
// Every agent of a bot copies its options, and the defaults are long CJK texts (the summary prompt, the
// tool-error texts): as std::string each is a heap block per agent, allocated when a session is built and
// freed when it is evicted. A shared_text holds a default (a literal) by view, and a text you set in one
// heap copy that every copy of the options shares.
//
//     opt.summary.prompt = "Summarise in one paragraph.";   // one copy, shared by the agents built from opt
//     std::string_view p = opt.summary.prompt;              // reads as a string_view
#pragma once

#include <ania/detail/linkage.hpp>

#include <memory>
#include <string>
#include <string_view>

namespace ania {

class shared_text {
public:
    shared_text() noexcept = default;
    shared_text(std::string s);
    shared_text(std::string_view s);
    shared_text(const char* s);

    /// Text with static storage duration (a literal, an `inline constexpr std::string_view`): held by view,
    /// never copied. The caller guarantees the lifetime.
    [[nodiscard]] static shared_text literal(std::string_view s) noexcept;

    operator std::string_view() const noexcept { return view_; }
    [[nodiscard]] std::string_view view() const noexcept { return view_; }
    [[nodiscard]] std::string str() const { return std::string(view_); }
    [[nodiscard]] const char* data() const noexcept { return view_.data(); }
    [[nodiscard]] std::size_t size() const noexcept { return view_.size(); }
    [[nodiscard]] bool empty() const noexcept { return view_.empty(); }

    friend bool operator==(const shared_text& a, const shared_text& b) noexcept { return a.view_ == b.view_; }
    friend bool operator==(const shared_text& a, std::string_view b) noexcept { return a.view_ == b; }
    friend bool operator==(const shared_text& a, const char* b) noexcept { return a.view_ == b; }
    friend bool operator==(const shared_text& a, const std::string& b) noexcept { return a.view_ == b; }

private:
    std::shared_ptr<const std::string> own_;  // null for a literal
    std::string_view view_;
};

} // namespace ania

#if ANIA_HEADER_ONLY
#include <ania/text/shared_text-inl.hpp>
#endif
