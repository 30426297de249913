// ania/memory/inject.hpp -- memory.auto_inject: the block of relevant memories put before a user message.
// SPDX-License-Identifier: MIT
#pragma once

#include <algorithm>
#include <cstddef>
#include <string>
#include <string_view>

#include <ania/memory/scope.hpp>
#include <ania/text/utf8.hpp>

namespace ania::memory {

inline constexpr std::string_view default_inject_header =
    "【相关记忆】以下记忆仅供参考；如发现与事实不符或已过时，请用 memory_update 更正：";
inline constexpr std::string_view english_inject_header =
    "[Relevant memories] For reference only; if one is wrong or outdated, correct it with memory_update:";

/// The auto-inject block for a user message (memory.auto_inject): the entries of `s` most relevant to the
/// tail of the message, at most options().inject_entries of them and about inject_runes runes, under a header
/// that says they are for reference and asks the model to correct wrong or outdated ones with memory_update.
/// "" when nothing is relevant (or memory is disabled). It goes into the request only, never into the window
/// or the store. `Manager` is a memory::basic_manager.
template <class Manager>
[[nodiscard]] std::string inject_block(Manager& manager, const scope& s, std::string_view user_text,
                                       std::string_view header = default_inject_header) {
    const auto& opt = manager.options();
    if (opt.inject_entries == 0) return {};  // (search's limit 0 means every hit)
    const std::string fixed = text::repair_utf8(user_text);
    const std::size_t runes = text::rune_count(fixed);
    std::string_view tail = fixed;
    if (runes > opt.inject_runes) {  // the newest part of a long message is the question
        const std::string_view head = text::truncate_runes(fixed, runes - opt.inject_runes);
        tail.remove_prefix(head.size());
    }
    const auto hits = manager.search(s, tail, opt.inject_entries);
    if (hits.empty()) return {};
    std::string block(header);
    std::size_t budget = opt.inject_runes > text::rune_count(block) ? opt.inject_runes - text::rune_count(block) : 0;
    for (const auto& h : hits) {
        std::string line = "\n- [" + h.item.id + "] ";
        const std::size_t overhead = text::rune_count(line);
        if (budget <= overhead) break;
        line += text::truncate_runes(h.item.content, budget - overhead);
        budget -= std::min(budget, text::rune_count(line));
        block += line;
    }
    return block;
}

} // namespace ania::memory
