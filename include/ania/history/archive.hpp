// ania/history/archive.hpp -- non-destructive compaction: what a summary or a cut removed from a history,
// kept in an archive beside it (the contract, archiving_store, is in <ania/concepts.hpp>).
// SPDX-License-Identifier: MIT
//
// Every archived message of a session gets the next number of that session's archive (`seq`: 0, 1, 2, ...
// over every compaction, never reused, not even after a clear), so a range named by the model stays the
// same messages whatever is archived later. The archive is bounded per session (archive_options): when a
// compaction would pass a cap, the oldest archived messages go first, and `first_seq` says how many went.
#pragma once

#include <cstddef>
#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include <ania/message.hpp>

namespace ania {

/// How a store keeps a session's archive.
struct archive_options {
    std::size_t max_messages = 10'000;    ///< per session; the oldest go first past it (0: no limit)
    std::size_t max_bytes = 16u << 20;    ///< per session, of archived_bytes(); the oldest go first past it (0: no limit)
    /// clear(session) forgets the archive too (the default: a user who says "forget this" means all of it);
    /// true keeps it for the operator.
    bool keep_on_clear = false;
};

/// What one compaction removed, as the store keeps it.
struct archive_batch {
    std::vector<message> messages;  ///< oldest first, as stored (images already markers)
    std::string summary;            ///< the summary that replaced them; empty for a cut
    std::string archived_at;        ///< UTC, fixed width (detail::utc_timestamp): text order is time order
};

/// One archived message.
struct archived_message {
    std::int64_t seq = 0;     ///< its number in the session's archive
    std::string archived_at;  ///< when the compaction that removed it ran
    message msg;
};

/// The summary one compaction left in place of archived messages [first_seq, first_seq + count).
struct archive_summary {
    std::int64_t first_seq = 0;
    std::int64_t count = 0;
    std::string summary;  ///< empty for a cut
    std::string archived_at;
    friend bool operator==(const archive_summary&, const archive_summary&) = default;
};

/// A read of a session's archive: the messages asked for, and where the archive stands.
struct archive_slice {
    std::vector<archived_message> messages;  ///< seq ascending
    std::vector<archive_summary> summaries;  ///< of the compactions the messages came from, oldest first
    std::int64_t first_seq = 0;  ///< the oldest still kept: [0, first_seq) went to the cap or to a clear
    std::int64_t next_seq = 0;   ///< one past the newest ever archived (0: nothing ever was)
    /// Rows of the range that did not parse (another tool or version wrote them): skipped, not returned.
    std::size_t skipped = 0;
};

/// read_archive's `count` for "every message from `from` on".
inline constexpr std::size_t whole_archive = std::numeric_limits<std::size_t>::max();

/// What a message weighs against archive_options::max_bytes: the bytes of its texts (content, parts, tool
/// calls, ids, reasoning) and 16 for its frame. The same in every store, whatever each stores it as.
[[nodiscard]] inline std::size_t archived_bytes(const message& m) noexcept {
    std::size_t n = 16 + m.content.size() + (m.tool_call_id ? m.tool_call_id->size() : 0) + (m.name ? m.name->size() : 0) +
                    (m.reasoning_content ? m.reasoning_content->size() : 0);
    for (const content_part& p : m.parts) n += p.text.size() + p.url.size();
    for (const tool_call& c : m.tool_calls) n += c.id.size() + c.name.size() + c.arguments.size();
    return n;
}

namespace detail {
/// Where a session's archive must start so that what remains fits `opt`, given its rows' sizes oldest first
/// (`bytes_of(i)`, i in [0, n)) starting at seq `first`: that seq (`first` when nothing must go) and the bytes
/// that remain. The newest message always stays, even alone over max_bytes (an archive that drops what it
/// was just given would archive nothing).
struct archive_trim {
    std::int64_t first_seq;
    std::size_t bytes;
};
template <class BytesOf>
[[nodiscard]] archive_trim archive_cut(std::int64_t first, std::size_t n, std::size_t total_bytes, const archive_options& opt,
                                       BytesOf&& bytes_of) {
    std::size_t drop = 0;
    if (opt.max_messages && n > opt.max_messages) drop = n - opt.max_messages;
    std::size_t bytes = total_bytes;
    for (std::size_t i = 0; i < drop; ++i) bytes -= bytes_of(i);
    while (opt.max_bytes && bytes > opt.max_bytes && drop + 1 < n) bytes -= bytes_of(drop++);
    return {first + static_cast<std::int64_t>(drop), bytes};
}
} // namespace detail

} // namespace ania
