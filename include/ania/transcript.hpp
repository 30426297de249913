// ania/transcript.hpp -- the tool-call structure an OpenAI-compatible API accepts: validator and repair.
// SPDX-License-Identifier: MIT
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <ania/message.hpp>
#include <ania/text/utf8.hpp>

namespace ania {

/// A reason an OpenAI-compatible API rejects a transcript with HTTP 400 (and, once persisted, every later
/// request too: the "sticky 400").
enum class transcript_problem : std::uint8_t {
    orphan_result,      ///< a tool message that does not follow an assistant message with tool_calls
    unknown_result,     ///< a tool message inside a tool block whose id none of the block's calls has
    duplicate_result,   ///< a second tool message for the same call
    unanswered_call,    ///< a tool call with no tool message among those right after it
    duplicate_call_id,  ///< two calls with the same id in one assistant message
    invalid_id,         ///< a call id or tool_call_id that is empty (nothing can answer or be matched), or not
                        ///< valid UTF-8 (on the wire it becomes another id)
};

[[nodiscard]] constexpr std::string_view to_string(transcript_problem p) noexcept {
    switch (p) {
    case transcript_problem::orphan_result: return "orphan_result";
    case transcript_problem::unknown_result: return "unknown_result";
    case transcript_problem::duplicate_result: return "duplicate_result";
    case transcript_problem::unanswered_call: return "unanswered_call";
    case transcript_problem::duplicate_call_id: return "duplicate_call_id";
    case transcript_problem::invalid_id: return "invalid_id";
    }
    return "unknown";
}

/// One problem: the index of the offending message (for calls: the assistant message) and the call id.
struct transcript_issue {
    transcript_problem problem;
    std::size_t index;
    std::string tool_call_id;
    friend bool operator==(const transcript_issue&, const transcript_issue&) = default;
};

/// What to do with tool calls that have no result (a turn cut off by an error, a cancellation or a cut).
enum class unanswered_call_policy : std::uint8_t {
    add_cancelled,  ///< answer each with a tool message holding `cancelled_text`
    drop_calls,     ///< remove the calls; an assistant message left with nothing is removed
};

struct repair_options {
    unanswered_call_policy unanswered = unanswered_call_policy::add_cancelled;
    std::string cancelled_text = "[cancelled]";
};

/// What a repair changed.
struct repair_report {
    std::size_t results_dropped = 0;    ///< orphan, unknown and duplicate tool messages removed
    std::size_t results_added = 0;      ///< "[cancelled]" results inserted
    std::size_t calls_dropped = 0;      ///< tool calls removed (duplicates, or unanswered with drop_calls)
    std::size_t messages_dropped = 0;   ///< assistant messages removed because nothing was left of them
    [[nodiscard]] bool changed() const noexcept {
        return results_dropped + results_added + calls_dropped + messages_dropped != 0;
    }
};

namespace detail {

/// Marks which calls of one assistant message are answered; no allocation for up to 64 calls.
class call_marks {
public:
    explicit call_marks(std::size_t n) : n_(n) {
        if (n > 64) big_.assign(n, false);
    }
    [[nodiscard]] bool test(std::size_t i) const noexcept { return n_ > 64 ? bool(big_[i]) : (small_ >> i) & 1U; }
    void set(std::size_t i) noexcept {
        if (n_ > 64) big_[i] = true;
        else small_ |= std::uint64_t{1} << i;
    }

private:
    std::size_t n_;
    std::uint64_t small_ = 0;
    std::vector<bool> big_;
};

/// The id a tool message answers ("" when it has none). A view: value_or("") would dangle.
[[nodiscard]] inline std::string_view answered_id(const message& m) noexcept {
    return m.tool_call_id ? std::string_view(*m.tool_call_id) : std::string_view();
}

/// Finds the first call with an id among the calls of one assistant message. Calls per message are usually
/// few, and then a linear scan beats anything; a model can also send tens of thousands, and then the ids are
/// sorted once, so a transcript costs O(n log n), never O(n²).
class call_index {
public:
    static constexpr std::size_t npos = static_cast<std::size_t>(-1);
    static constexpr std::size_t linear_max = 16;

    explicit call_index(std::span<const tool_call> calls) : calls_(calls) {
        if (calls.size() <= linear_max) return;
        sorted_.reserve(calls.size());
        for (std::size_t i = 0; i < calls.size(); ++i) sorted_.emplace_back(calls[i].id, i);
        std::sort(sorted_.begin(), sorted_.end());  // by id, then position: the first of equal ids comes first
    }
    /// Index of the first call with this id, or npos.
    [[nodiscard]] std::size_t first(std::string_view id) const noexcept {
        if (sorted_.empty()) {
            for (std::size_t i = 0; i < calls_.size(); ++i)
                if (calls_[i].id == id) return i;
            return npos;
        }
        const auto it = std::lower_bound(sorted_.begin(), sorted_.end(), std::pair<std::string_view, std::size_t>(id, 0));
        return it != sorted_.end() && it->first == id ? it->second : npos;
    }

private:
    std::span<const tool_call> calls_;
    std::vector<std::pair<std::string_view, std::size_t>> sorted_;
};

/// A non-empty id that is valid UTF-8. Ids are short and almost always ASCII: checked 8 bytes at a time,
/// the decoder only for the rare id that is not ASCII.
[[nodiscard]] inline bool id_ok(std::string_view id) noexcept {
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

/// The ids that matching reads: a tool message's tool_call_id, an assistant message's call ids.
[[nodiscard]] inline bool ids_valid(const message& m) noexcept {
    if (m.role == role::tool) return m.tool_call_id && id_ok(*m.tool_call_id);
    for (const tool_call& c : m.tool_calls)
        if (!id_ok(c.id)) return false;
    return true;
}

/// Walks the transcript once and reports every problem to `sink(problem, index, id)`; stops early when the
/// sink returns false. Shared by the validator and the fast validity check so they cannot disagree.
template <class Sink>
void scan_transcript(std::span<const message> ms, Sink&& sink) {
    constexpr std::size_t npos = static_cast<std::size_t>(-1);
    std::size_t i = 0;
    while (i < ms.size()) {
        const message& m = ms[i];
        if (m.role == role::tool) {
            if (!ids_valid(m) && !sink(transcript_problem::invalid_id, i, answered_id(m))) return;
            if (!sink(transcript_problem::orphan_result, i, answered_id(m))) return;
            ++i;
            continue;
        }
        if (m.role != role::assistant || !m.has_tool_calls()) {
            ++i;
            continue;
        }
        if (!ids_valid(m) && !sink(transcript_problem::invalid_id, i, std::string_view())) return;
        const auto& calls = m.tool_calls;
        const call_index index(calls);
        for (std::size_t c = 1; c < calls.size(); ++c)
            if (index.first(calls[c].id) != c)
                if (!sink(transcript_problem::duplicate_call_id, i, std::string_view(calls[c].id))) return;
        call_marks answered(calls.size());
        std::size_t j = i + 1;
        for (; j < ms.size() && ms[j].role == role::tool; ++j) {
            const std::string_view id = answered_id(ms[j]);
            if (!ids_valid(ms[j]) && !sink(transcript_problem::invalid_id, j, id)) return;
            const std::size_t c = index.first(id);
            if (c == npos) {
                if (!sink(transcript_problem::unknown_result, j, id)) return;
            } else if (answered.test(c)) {
                if (!sink(transcript_problem::duplicate_result, j, id)) return;
            } else {
                answered.set(c);
            }
        }
        for (std::size_t c = 0; c < calls.size(); ++c)
            if (!answered.test(c) && index.first(calls[c].id) == c)
                if (!sink(transcript_problem::unanswered_call, i, std::string_view(calls[c].id))) return;
        i = j;
    }
}

} // namespace detail

/// Every problem in the transcript, in message order. Empty means an OpenAI-compatible API accepts its
/// tool-call structure.
[[nodiscard]] inline std::vector<transcript_issue> validate_transcript(std::span<const message> ms) {
    std::vector<transcript_issue> out;
    detail::scan_transcript(ms, [&](transcript_problem p, std::size_t i, std::string_view id) {
        out.push_back({p, i, std::string(id)});
        return true;
    });
    return out;
}

/// True when validate_transcript would report nothing; allocation-free for the usual call counts.
[[nodiscard]] inline bool is_valid_transcript(std::span<const message> ms) {
    bool ok = true;
    detail::scan_transcript(ms, [&](transcript_problem, std::size_t, std::string_view) { return ok = false; });
    return ok;
}

/// Makes the transcript valid: repairs ids that are not valid UTF-8 (to U+FFFD, as the wire form will: first,
/// so that matching sees the ids the API will see), drops calls without an id, orphan, unknown (an empty id
/// included) and duplicate tool results and duplicate call ids, and answers or drops unanswered calls (`opt.unanswered`). A call's results stay right
/// after it, in their order; every other message is left untouched. Idempotent; a valid transcript is not
/// touched at all. O(n log n) in the tool calls of a message.
inline repair_report repair_transcript(std::vector<message>& ms, const repair_options& opt = {}) {
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
