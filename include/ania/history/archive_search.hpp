// ania/history/archive_search.hpp -- finding what a compaction archived: keyword search over a session's
// archive with long-term memory's CJK-aware tokenizer and scores, and the history_search / history_get tools.
// SPDX-License-Identifier: MIT
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <list>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include <ania/concepts.hpp>
#include <ania/detail/linkage.hpp>
#include <ania/history/archive.hpp>
#include <ania/tool.hpp>

namespace ania {

/// One message history_search found.
struct archive_hit {
    std::int64_t seq = 0;
    std::string archived_at;
    message msg;
    double score = 0;  ///< memory_search's keyword score: +10 per query term the message's text contains
};

struct archive_search_result {
    std::vector<archive_hit> hits;  ///< best first; equal scores newest first
    std::int64_t first_seq = 0;     ///< [0, first_seq) went to the archive's cap or to a clear
    std::int64_t next_seq = 0;
};

/// What the model reads from the tools. `{n}`, `{seq}`, `{from}`, `{to}`, `{time}`, `{role}`, `{text}`,
/// `{dropped}`, `{error}` are replaced.
struct archive_tool_replies {
    std::string search_description =
        "Search this conversation's archived messages (what earlier context compressions removed from view) by "
        "keywords. Returns the best matches with their number (#seq) and when they were archived; read the "
        "surrounding messages with history_get.";
    std::string get_description =
        "Read archived messages of this conversation by number: from (the first #seq), count (at most 50).";
    std::string found = "Found {n} archived messages:";
    std::string none = "No archived message matches.";
    std::string empty = "Nothing of this conversation is archived.";
    std::string line = "#{seq} [{time}] {role}: {text}";
    std::string summary = "(summary that replaced #{from}-#{to}: {text})";
    std::string dropped = "({dropped} older archived messages are no longer kept.)";
    std::string bad_arguments = "Error: invalid arguments: {error}";
    std::string failed = "Error: the archive could not be read: {error}";
    std::size_t max_runes_per_hit = 600;    ///< a longer message found by history_search is cut
    std::size_t max_runes_per_read = 4000;  ///< ... and one read by history_get
};

/// Keyword search over the archives of many sessions (a bot's). Each searched session gets an index in
/// memory (the memory module's tokenizer, containment postings and scores: memory_search's semantics),
/// built on its first search and brought up to date on each later one from what was archived since (one
/// read of the store: a search sees every compaction, also another process's); when the oldest went to the
/// cap or to a clear it is built again. The indexes of at most `max_sessions` sessions are kept (the least
/// recently searched go). Thread-safe: searches of different sessions run in parallel.
///
/// The store is read through `read` (an archiving_store's read_archive, usually a background_writer's, so
/// that queued compactions are seen): `archive_index(writer)`.
class archive_index {
public:
    using reader = std::function<archive_slice(std::string_view session, std::int64_t from, std::size_t count)>;

    template <archiving_store Store>
    explicit archive_index(Store& store, std::size_t max_sessions = 16)
        : archive_index(reader([&store](std::string_view s, std::int64_t from, std::size_t n) { return store.read_archive(s, from, n); }),
                        max_sessions) {}
    ANIA_INLINE explicit archive_index(reader read, std::size_t max_sessions = 16);
    ANIA_INLINE ~archive_index();
    archive_index(const archive_index&) = delete;
    archive_index& operator=(const archive_index&) = delete;

    /// The archived messages of `session` that contain a term of `query` (at least one), best first; at
    /// most `limit`. An empty query finds nothing. Store failures throw (ania::error).
    [[nodiscard]] ANIA_INLINE archive_search_result search(std::string_view session, std::string_view query, std::size_t limit);

    /// A range of the archive, straight from the store (at most `count` from `from`).
    [[nodiscard]] archive_slice get(std::string_view session, std::int64_t from, std::size_t count) const {
        return read_(session, from, count);
    }

    /// Sessions with an index in memory.
    [[nodiscard]] ANIA_INLINE std::size_t resident() const;

private:
    struct session_index;
    ANIA_INLINE std::shared_ptr<session_index> index_of(std::string_view session);

    reader read_;
    std::size_t max_sessions_;
    mutable std::mutex mutex_;
    std::list<std::string> lru_;  // most recently searched first
    struct slot {
        std::shared_ptr<session_index> index;
        std::list<std::string>::iterator at;
    };
    std::unordered_map<std::string, slot> sessions_;
};

/// The text of a message as history_search sees it: its text, and for each tool call its name and arguments.
[[nodiscard]] ANIA_INLINE std::string searchable_text(const message& m);

/// history_search(query, limit?) and history_get(from, count?), bound to `session` when they are made: the
/// model names no session and cannot reach another one's archive. `index` must outlive the tools.
[[nodiscard]] ANIA_INLINE std::vector<tool> make_archive_tools(archive_index& index, std::string session,
                                                               archive_tool_replies replies = {});

} // namespace ania

#if ANIA_HEADER_ONLY
#include <ania/history/archive_search-inl.hpp>
#endif
