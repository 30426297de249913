// ania/memory/ram_backend.hpp -- memories kept in process memory (lost on restart); thread-safe.
// SPDX-License-Identifier: MIT
#pragma once

#include <algorithm>
#include <map>
#include <mutex>
#include <string>
#include <string_view>
#include <vector>

#include <ania/detail/linkage.hpp>
#include <ania/error.hpp>
#include <ania/memory/concepts.hpp>
#include <ania/memory/entry.hpp>

namespace ania::memory {

class ram_backend {
public:
    [[nodiscard]] bool enabled() const noexcept { return true; }
    [[nodiscard]] std::vector<entry> load(const scope& s) const;
    [[nodiscard]] std::vector<std::string> scopes() const;
    void insert(const scope& s, const entry& e);
    void update(const scope& s, const entry& e);
    void erase(const scope& s, std::string_view id);

private:
    static bool older(const entry& a, const entry& b) noexcept;

    mutable std::mutex mutex_;
    std::map<std::string, std::vector<entry>, std::less<>> scopes_;
};

static_assert(memory_backend<ram_backend>);

} // namespace ania::memory

#if ANIA_HEADER_ONLY
#include <ania/memory/ram_backend-inl.hpp>
#endif
