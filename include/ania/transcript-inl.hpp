// ania/transcript-inl.hpp -- the definitions of <ania/transcript.hpp>.
// Header-only mode includes this from there; compiled mode compiles it once, in the library (see
// <ania/detail/linkage.hpp>).
// SPDX-License-Identifier: MIT
#pragma once

#include <ania/detail/linkage.hpp>
#if !ANIA_HEADER_ONLY && !defined(ANIA_BUILDING_LIBRARY)
static_assert(false, "compiled mode: the library defines what <ania/transcript-inl.hpp> defines; include <ania/transcript.hpp>");
#endif

#include <ania/transcript.hpp>

namespace ania {

ANIA_INLINE auto repair_report::changed() const noexcept -> bool {
    return results_dropped + results_added + calls_dropped + messages_dropped != 0;
}

} // namespace ania

namespace ania::detail {

ANIA_INLINE call_marks::call_marks(std::size_t n)
    : n_(n) {
    if (n > 64) big_.assign(n, false);
}

ANIA_INLINE auto call_marks::set(std::size_t i) noexcept -> void {
    if (n_ > 64) big_[i] = true;
    else small_ |= std::uint64_t{1} << i;
}

ANIA_INLINE std::string_view answered_id(const message& m) noexcept {
    return m.tool_call_id ? std::string_view(*m.tool_call_id) : std::string_view();
}

ANIA_INLINE call_index::call_index(std::span<const tool_call> calls)
    : calls_(calls) {
    if (calls.size() <= linear_max) return;
    sorted_.reserve(calls.size());
    for (std::size_t i = 0; i < calls.size(); ++i) sorted_.emplace_back(calls[i].id, i);
    std::sort(sorted_.begin(), sorted_.end());  // by id, then position: the first of equal ids comes first
}

ANIA_INLINE auto call_index::first(std::string_view id) const noexcept -> std::size_t {
    if (sorted_.empty()) {
        for (std::size_t i = 0; i < calls_.size(); ++i)
            if (calls_[i].id == id) return i;
        return npos;
    }
    const auto it = std::lower_bound(sorted_.begin(), sorted_.end(), std::pair<std::string_view, std::size_t>(id, 0));
    return it != sorted_.end() && it->first == id ? it->second : npos;
}

ANIA_INLINE bool id_ok(std::string_view id) noexcept {
    const std::size_t n = id.size();
    if (n == 0) return false;
    const char* p = id.data();
    std::uint64_t high = 0;
    std::size_t i = 0;
    for (; i + 8 <= n; i += 8) {
        std::uint64_t w;
        std::memcpy(&w, p + i, 8);
        high |= w;
    }
    for (; i < n; ++i) high |= static_cast<unsigned char>(p[i]);
    return (high & 0x8080808080808080ULL) == 0 || text::is_valid_utf8(id);
}

ANIA_INLINE bool ids_valid(const message& m) noexcept {
    if (m.role == role::tool) return m.tool_call_id && id_ok(*m.tool_call_id);
    for (const tool_call& c : m.tool_calls)
        if (!id_ok(c.id)) return false;
    return true;
}

} // namespace ania::detail

namespace ania {

ANIA_INLINE std::vector<transcript_issue> validate_transcript(std::span<const message> ms) {
    std::vector<transcript_issue> out;
    detail::scan_transcript(ms, [&](transcript_problem p, std::size_t i, std::string_view id) {
        out.push_back({p, i, std::string(id)});
        return true;
    });
    return out;
}

ANIA_INLINE bool is_valid_transcript(std::span<const message> ms) {
    bool ok = true;
    detail::scan_transcript(ms, [&](transcript_problem, std::size_t, std::string_view) { return ok = false; });
    return ok;
}

ANIA_INLINE repair_report repair_transcript(std::vector<message>& ms, const repair_options& opt) {
    repair_report report;
    if (is_valid_transcript(ms)) return report;
    for (message& m : ms) {
        if ((m.role != role::tool && m.role != role::assistant) || detail::ids_valid(m)) continue;
        if (m.tool_call_id) *m.tool_call_id = text::repair_utf8(*m.tool_call_id);
        for (tool_call& c : m.tool_calls) c.id = text::repair_utf8(c.id);
    }
    std::vector<message> out;
    out.reserve(ms.size());
    std::size_t i = 0;
    while (i < ms.size()) {
        message& m = ms[i];
        if (m.role == role::tool) {  // outside any tool block: orphan
            ++report.results_dropped;
            ++i;
            continue;
        }
        if (m.role != role::assistant || !m.has_tool_calls()) {
            out.push_back(std::move(m));
            ++i;
            continue;
        }
        // Duplicate call ids: the first call keeps the id.
        detail::call_marks first_of_its_id(m.tool_calls.size());
        {
            const detail::call_index original(m.tool_calls);  // views the ids: gone before they are moved
            for (std::size_t c = 0; c < m.tool_calls.size(); ++c)
                if (original.first(m.tool_calls[c].id) == c) first_of_its_id.set(c);
        }
        std::vector<tool_call> calls;
        calls.reserve(m.tool_calls.size());
        for (std::size_t c = 0; c < m.tool_calls.size(); ++c) {  // a call without an id cannot be answered: gone
            if (first_of_its_id.test(c) && !m.tool_calls[c].id.empty()) calls.push_back(std::move(m.tool_calls[c]));
            else ++report.calls_dropped;
        }
        const detail::call_index index(calls);
        detail::call_marks answered(calls.size());
        std::vector<message> results;
        std::size_t j = i + 1;
        for (; j < ms.size() && ms[j].role == role::tool; ++j) {
            const std::size_t c = index.first(detail::answered_id(ms[j]));
            if (c == static_cast<std::size_t>(-1) || answered.test(c)) {
                ++report.results_dropped;
                continue;
            }
            answered.set(c);
            results.push_back(std::move(ms[j]));
        }
        if (opt.unanswered == unanswered_call_policy::add_cancelled) {
            for (std::size_t c = 0; c < calls.size(); ++c) {
                if (answered.test(c)) continue;
                results.push_back(message::tool_result(calls[c].id, opt.cancelled_text));
                ++report.results_added;
            }
            m.tool_calls = std::move(calls);
        } else {
            m.tool_calls.clear();
            for (std::size_t c = 0; c < calls.size(); ++c) {
                if (answered.test(c)) m.tool_calls.push_back(std::move(calls[c]));
                else ++report.calls_dropped;
            }
        }
        if (m.tool_calls.empty() && m.content_empty()) {
            ++report.messages_dropped;  // nothing left to say (results is empty too: none matched)
        } else {
            out.push_back(std::move(m));
            for (message& r : results) out.push_back(std::move(r));
        }
        i = j;
    }
    ms = std::move(out);
    return report;
}

} // namespace ania
