// ania/memory/ram_backend.hpp -- memories kept in process memory (lost on restart); thread-safe.
// SPDX-License-Identifier: MIT
#pragma once

#include <algorithm>
#include <map>
#include <mutex>
#include <string>
#include <string_view>
#include <vector>

#include <ania/error.hpp>
#include <ania/memory/concepts.hpp>
#include <ania/memory/entry.hpp>

namespace ania::memory {

class ram_backend {
public:
    [[nodiscard]] bool enabled() const noexcept { return true; }
    [[nodiscard]] std::vector<entry> load(const scope& s) const {
        std::lock_guard lock(mutex_);
        const auto it = scopes_.find(s.str());
        if (it == scopes_.end()) return {};
        std::vector<entry> out = it->second;  // kept in order by insert; update may change created_at
        if (!std::is_sorted(out.begin(), out.end(), older)) std::stable_sort(out.begin(), out.end(), older);
        return out;
    }
    [[nodiscard]] std::vector<std::string> scopes() const {
        std::lock_guard lock(mutex_);
        std::vector<std::string> out;
        for (const auto& [k, v] : scopes_)
            if (!v.empty()) out.push_back(k);
        return out;
    }
    void insert(const scope& s, const entry& e) {
        std::lock_guard lock(mutex_);
        auto& v = scopes_[s.str()];
        for (const entry& x : v)
            if (x.id == e.id) throw error(errc::store_error, "memory " + e.id + " already exists in " + s.str());
        v.insert(std::upper_bound(v.begin(), v.end(), e, older), e);
    }
    void update(const scope& s, const entry& e) {
        std::lock_guard lock(mutex_);
        for (entry& x : scopes_[s.str()])
            if (x.id == e.id) {
                x = e;
                return;
            }
        throw error(errc::store_error, "memory " + e.id + " not found in " + s.str());
    }
    void erase(const scope& s, std::string_view id) {
        std::lock_guard lock(mutex_);
        auto& v = scopes_[s.str()];
        std::erase_if(v, [&](const entry& x) { return x.id == id; });
    }

private:
    static bool older(const entry& a, const entry& b) noexcept {
        return a.created_at != b.created_at ? a.created_at < b.created_at : a.id < b.id;
    }

    mutable std::mutex mutex_;
    std::map<std::string, std::vector<entry>, std::less<>> scopes_;
};

static_assert(memory_backend<ram_backend>);

} // namespace ania::memory
