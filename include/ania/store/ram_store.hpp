// ania/store/ram_store.hpp -- history kept in process memory; thread-safe; lost on restart.
// SPDX-License-Identifier: MIT
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <map>
#include <mutex>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include <ania/detail/linkage.hpp>
#include <ania/concepts.hpp>
#include <ania/history/archive.hpp>
#include <ania/message.hpp>

namespace ania {

/// A history_store in a map guarded by one mutex. Messages are copied in and out, as a database would.
/// Also an archiving_store: a session's archive lives beside its history, bounded by `archive`.
class ram_store {
public:
    ram_store() = default;
    explicit ram_store(archive_options archive) : archive_opt_(archive) {}

    [[nodiscard]] std::vector<message> load(std::string_view session) const;
    void append(std::string_view session, std::span<const message> msgs);
    void replace(std::string_view session, std::span<const message> msgs);
    void clear(std::string_view session);
    void drop_front(std::string_view session, std::size_t k);
    /// Number of sessions held.
    [[nodiscard]] std::size_t size() const;

    // archiving_store (see <ania/concepts.hpp>)
    void replace_archiving(std::string_view session, std::span<const message> msgs, const archive_batch& batch);
    void drop_front_archiving(std::string_view session, std::size_t k, const archive_batch& batch);
    [[nodiscard]] archive_slice read_archive(std::string_view session, std::int64_t from, std::size_t count) const;
    void clear_archive(std::string_view session);

private:
    struct archive {
        std::deque<archived_message> rows;  // seq first_seq .. next_seq - 1
        std::deque<std::size_t> bytes;      // archived_bytes of each row
        std::vector<archive_summary> summaries;
        std::int64_t first_seq = 0, next_seq = 0;
        std::size_t total_bytes = 0;
    };

    std::vector<message>& slot(std::string_view session);
    void archive_locked(std::string_view session, const archive_batch& batch);
    void clear_archive_locked(std::string_view session);

    archive_options archive_opt_{};
    mutable std::mutex mutex_;
    std::map<std::string, std::vector<message>, std::less<>> sessions_;
    std::map<std::string, archive, std::less<>> archives_;
};

static_assert(prefix_dropping_store<ram_store> && archiving_store<ram_store>);

/// A history_store that keeps nothing: every load is empty (no persistence).
struct null_store {
    [[nodiscard]] std::vector<message> load(std::string_view) const { return {}; }
    void append(std::string_view, std::span<const message>) noexcept {}
    void replace(std::string_view, std::span<const message>) noexcept {}
    void clear(std::string_view) noexcept {}
};

static_assert(history_store<null_store>);

} // namespace ania

#if ANIA_HEADER_ONLY
#include <ania/store/ram_store-inl.hpp>
#endif
