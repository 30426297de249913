// ania/memory/entry.hpp -- one long-term memory, and the storage and embedding contracts around it.
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

/// Where memories live. `load(scope)` returns the scope's entries oldest first (ties by id); `scopes()` the
/// scopes that hold any. Writes throw ania::error on failure. `enabled()` is false when the backend could
/// not be set up (SPEC §4: then the memory feature is disabled as a whole). Thread-safe.
template <class B>
concept memory_backend = requires(B& b, const scope& s, const entry& e, std::string_view id) {
    { b.enabled() } -> std::convertible_to<bool>;
    { b.load(s) } -> std::same_as<std::vector<entry>>;
    { b.scopes() } -> std::same_as<std::vector<std::string>>;
    b.insert(s, e);
    b.update(s, e);
    b.erase(s, id);
};

/// Optional capability: a backend shared with other processes (or other managers) tells whether a scope
/// changed. `version(s)` changes whenever the scope's rows change, by anyone; each write returns the version
/// it produced. The manager checks it before using its in-memory index of a scope and reloads the scope when
/// someone else wrote (so a memory saved by process A is seen, deduplicated and counted by process B).
/// `insert_if(s, e, v)` inserts only if the scope's version is still `v`, atomically (nullopt otherwise): a
/// save checks the cap and duplicates against version v, so two processes saving at the same instant cannot
/// both pass them.
template <class B>
concept versioned_memory_backend = memory_backend<B> && requires(B& b, const scope& s, const entry& e, std::string_view id,
                                                                 std::uint64_t v) {
    { b.version(s) } -> std::convertible_to<std::uint64_t>;
    { b.insert_if(s, e, v) } -> std::same_as<std::optional<std::uint64_t>>;
    { b.insert(s, e) } -> std::convertible_to<std::uint64_t>;
    { b.update(s, e) } -> std::convertible_to<std::uint64_t>;
    { b.erase(s, id) } -> std::convertible_to<std::uint64_t>;
};

/// Turns text into a vector (one embedder is shared with the knowledge base). nullopt = unavailable right now:
/// memory then degrades to keywords only, silently. Must be thread-safe; may block on the network.
template <class E>
concept embedder = requires(E& e, std::string_view text) {
    { e.embed(text) } -> std::same_as<std::optional<std::vector<float>>>;
};

/// No embeddings: keyword search only.
struct no_embedder {
    std::optional<std::vector<float>> embed(std::string_view) const noexcept { return std::nullopt; }
};
static_assert(embedder<no_embedder>);

/// Where created_at comes from (tests use a manual clock).
template <class C>
concept wall_clock = requires(const C& c) {
    { c.now() } -> std::convertible_to<std::chrono::system_clock::time_point>;
};

struct system_wall_clock {
    [[nodiscard]] std::chrono::system_clock::time_point now() const noexcept { return std::chrono::system_clock::now(); }
};

} // namespace ania::memory
