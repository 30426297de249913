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

#include <ania/detail/linkage.hpp>
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
    [[nodiscard]] bool changed() const noexcept;
};

namespace detail {

/// Marks which calls of one assistant message are answered; no allocation for up to 64 calls.
class call_marks {
public:
    explicit call_marks(std::size_t n);
    [[nodiscard]] bool test(std::size_t i) const noexcept { return n_ > 64 ? bool(big_[i]) : (small_ >> i) & 1U; }
    void set(std::size_t i) noexcept;

private:
    std::size_t n_;
    std::uint64_t small_ = 0;
    std::vector<bool> big_;
};

/// The id a tool message answers ("" when it has none). A view: value_or("") would dangle.
[[nodiscard]] ANIA_INLINE std::string_view answered_id(const message& m) noexcept;

/// Finds the first call with an id among the calls of one assistant message. Calls per message are usually
/// few, and then a linear scan beats anything; a model can also send tens of thousands, and then the ids are
/// sorted once, so a transcript costs O(n log n), never O(n²).
class call_index {
public:
    static constexpr std::size_t npos = static_cast<std::size_t>(-1);
    static constexpr std::size_t linear_max = 16;

    explicit call_index(std::span<const tool_call> calls);
    /// Index of the first call with this id, or npos.
    [[nodiscard]] std::size_t first(std::string_view id) const noexcept;

private:
    std::span<const tool_call> calls_;
    std::vector<std::pair<std::string_view, std::size_t>> sorted_;
};

/// A non-empty id that is valid UTF-8. Ids are short and almost always ASCII: checked 8 bytes at a time,
/// the decoder only for the rare id that is not ASCII.
[[nodiscard]] ANIA_INLINE bool id_ok(std::string_view id) noexcept;

/// The ids that matching reads: a tool message's tool_call_id, an assistant message's call ids.
[[nodiscard]] ANIA_INLINE bool ids_valid(const message& m) noexcept;

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
[[nodiscard]] ANIA_INLINE std::vector<transcript_issue> validate_transcript(std::span<const message> ms);

/// True when validate_transcript would report nothing; allocation-free for the usual call counts.
[[nodiscard]] ANIA_INLINE bool is_valid_transcript(std::span<const message> ms);

/// Makes the transcript valid: repairs ids that are not valid UTF-8 (to U+FFFD, as the wire form will: first,
/// so that matching sees the ids the API will see), drops calls without an id, orphan, unknown (an empty id
/// included) and duplicate tool results and duplicate call ids, and answers or drops unanswered calls (`opt.unanswered`). A call's results stay right
/// after it, in their order; every other message is left untouched. Idempotent; a valid transcript is not
/// touched at all. O(n log n) in the tool calls of a message.
ANIA_INLINE repair_report repair_transcript(std::vector<message>& ms, const repair_options& opt = {});

} // namespace ania

#if ANIA_HEADER_ONLY
#include <ania/transcript-inl.hpp>
#endif
