// ania/memory/entry.hpp -- one long-term memory, and the default embedder and clock (contracts: memory/concepts.hpp).
// SPDX-License-Identifier: MIT
#pragma once

#include <chrono>
#include <concepts>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <ania/memory/scope.hpp>

namespace ania::memory {

/// One memory. `created_at` is fixed-width UTC text (YYYY-MM-DDTHH:MM:SS.nnnnnnnnnZ): text order is time order.
struct entry {
    std::string id;          ///< 8 lower-case hex digits, unique in its scope
    std::string user_id;     ///< who it is about ("" = nobody in particular)
    std::string content;     ///< at most memory.max_content_runes runes
    std::vector<std::string> tags;
    std::vector<float> embedding;  ///< empty = none (no embedder, or it failed)
    std::string created_at;
    friend bool operator==(const entry&, const entry&) = default;
};

/// No embeddings: keyword search only.
struct no_embedder {
    std::optional<std::vector<float>> embed(std::string_view) const noexcept { return std::nullopt; }
};

struct system_wall_clock {
    [[nodiscard]] std::chrono::system_clock::time_point now() const noexcept { return std::chrono::system_clock::now(); }
};

} // namespace ania::memory
