// ania/memory/scope.hpp -- the scope a memory belongs to: g:<group id> or f:<user id> (SPEC §4).
// SPDX-License-Identifier: MIT
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include <ania/detail/linkage.hpp>
#include <ania/error.hpp>
#include <ania/text/utf8.hpp>

namespace ania::memory {

/// A validated scope: `g:` or `f:` followed by one or more ASCII digits (`^[gf]:\d+$`), nothing else.
class scope {
public:
    /// The scope named `text`, or nullopt when it is not one.
    [[nodiscard]] static std::optional<scope> parse(std::string_view text);
    /// As parse(), but throws ania::error (invalid_argument) naming the rule.
    [[nodiscard]] static scope from(std::string_view text);
    [[nodiscard]] static scope group(std::string_view id) { return from("g:" + std::string(id)); }
    [[nodiscard]] static scope private_chat(std::string_view id) { return from("f:" + std::string(id)); }

    [[nodiscard]] const std::string& str() const noexcept { return text_; }
    [[nodiscard]] bool is_group() const noexcept { return text_[0] == 'g'; }
    friend bool operator==(const scope&, const scope&) = default;
    friend auto operator<=>(const scope&, const scope&) = default;

private:
    explicit scope(std::string t);
    std::string text_;
};

} // namespace ania::memory

#if ANIA_HEADER_ONLY
#include <ania/memory/scope-inl.hpp>
#endif
