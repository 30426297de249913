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
#include <ania/memory/provenance.hpp>

namespace ania::memory {

class ram_backend {
public:
    [[nodiscard]] bool enabled() const noexcept { return true; }
    [[nodiscard]] std::vector<entry> load(const scope& s) const;
    [[nodiscard]] std::vector<std::string> scopes() const;
    void insert(const scope& s, const entry& e);
    void update(const scope& s, const entry& e);
    void erase(const scope& s, std::string_view id);

    // With the version of the change (see history_memory_backend): kept in process memory too.
    [[nodiscard]] std::vector<memory_version> history(const scope& s, std::string_view id) const;
    void insert(const scope& s, const entry& e, const version_note& n);
    void update(const scope& s, const entry& e, const version_note& n);
    void erase(const scope& s, std::string_view id, const version_note& n);

private:
    static bool older(const entry& a, const entry& b) noexcept;

    mutable std::mutex mutex_;
    std::map<std::string, std::vector<entry>, std::less<>> scopes_;
    std::map<std::string, std::map<std::string, std::vector<memory_version>, std::less<>>, std::less<>> versions_;
};

static_assert(history_memory_backend<ram_backend>);

} // namespace ania::memory

#if ANIA_HEADER_ONLY
#include <ania/memory/ram_backend-inl.hpp>
#endif
