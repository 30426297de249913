// ania/store/ram_store.hpp -- history kept in process memory; thread-safe; lost on restart.
// SPDX-License-Identifier: MIT
#pragma once

#include <algorithm>
#include <cstddef>
#include <map>
#include <mutex>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include <ania/detail/linkage.hpp>
#include <ania/concepts.hpp>
#include <ania/message.hpp>

namespace ania {

/// A history_store in a map guarded by one mutex. Messages are copied in and out, as a database would.
class ram_store {
public:
    [[nodiscard]] std::vector<message> load(std::string_view session) const;
    void append(std::string_view session, std::span<const message> msgs);
    void replace(std::string_view session, std::span<const message> msgs);
    void clear(std::string_view session);
    void drop_front(std::string_view session, std::size_t k);
    /// Number of sessions held.
    [[nodiscard]] std::size_t size() const;

private:
    std::vector<message>& slot(std::string_view session);

    mutable std::mutex mutex_;
    std::map<std::string, std::vector<message>, std::less<>> sessions_;
};

static_assert(prefix_dropping_store<ram_store>);

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
