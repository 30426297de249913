// ania/store/memory_store.hpp -- history kept in process memory; thread-safe; lost on restart.
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

#include <ania/concepts.hpp>
#include <ania/message.hpp>

namespace ania {

/// A history_store in a map guarded by one mutex. Messages are copied in and out, as a database would.
class memory_store {
public:
    [[nodiscard]] std::vector<message> load(std::string_view session) const {
        std::lock_guard lock(mutex_);
        const auto it = sessions_.find(session);
        return it == sessions_.end() ? std::vector<message>{} : it->second;
    }
    void append(std::string_view session, std::span<const message> msgs) {
        if (msgs.empty()) return;
        std::lock_guard lock(mutex_);
        auto& h = slot(session);
        h.insert(h.end(), msgs.begin(), msgs.end());
    }
    void replace(std::string_view session, std::span<const message> msgs) {
        std::lock_guard lock(mutex_);
        slot(session).assign(msgs.begin(), msgs.end());
    }
    void clear(std::string_view session) {
        std::lock_guard lock(mutex_);
        if (const auto it = sessions_.find(session); it != sessions_.end()) sessions_.erase(it);
    }
    void drop_front(std::string_view session, std::size_t k) {
        std::lock_guard lock(mutex_);
        const auto it = sessions_.find(session);
        if (it == sessions_.end()) return;
        auto& h = it->second;
        h.erase(h.begin(), h.begin() + static_cast<std::ptrdiff_t>(std::min(k, h.size())));
    }
    /// Number of sessions held.
    [[nodiscard]] std::size_t size() const {
        std::lock_guard lock(mutex_);
        return sessions_.size();
    }

private:
    std::vector<message>& slot(std::string_view session) {
        auto it = sessions_.find(session);
        if (it == sessions_.end()) it = sessions_.emplace(std::string(session), std::vector<message>{}).first;
        return it->second;
    }

    mutable std::mutex mutex_;
    std::map<std::string, std::vector<message>, std::less<>> sessions_;
};

static_assert(prefix_dropping_store<memory_store>);

/// A history_store that keeps nothing: every load is empty (no persistence).
struct null_store {
    [[nodiscard]] std::vector<message> load(std::string_view) const { return {}; }
    void append(std::string_view, std::span<const message>) noexcept {}
    void replace(std::string_view, std::span<const message>) noexcept {}
    void clear(std::string_view) noexcept {}
};

static_assert(history_store<null_store>);

} // namespace ania
