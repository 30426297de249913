// ania/memory/concepts.hpp -- the contracts of long-term memory's policies, each with its archetype.
// SPDX-License-Identifier: MIT
//
// Included by <ania/concepts.hpp>: every contract of the library is found from there. An archetype is the
// least a type must have to model its concept (declared, never defined: for static_assert and tests only).
#pragma once

#include <chrono>
#include <concepts>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

#include <ania/memory/entry.hpp>
#include <ania/memory/provenance.hpp>
#include <ania/memory/scope.hpp>

namespace ania::memory {

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

/// Optional capability: a backend that keeps the versions of each entry (memory/provenance.hpp). Each write
/// given a version_note records that version in the same transaction as the row (a baseline of
/// `note.previous` first when the entry has none yet), with seq one more than the entry's last, and drops
/// the entry's oldest versions beyond `note.keep`. Versions outlive a forget (that is what a restore reads).
/// `history(s, id)` returns the entry's versions, oldest first. A versioned backend also takes a note with
/// insert_if.
template <class B>
concept history_memory_backend = memory_backend<B> && requires(B& b, const scope& s, const entry& e, std::string_view id,
                                                               const version_note& n) {
    { b.history(s, id) } -> std::same_as<std::vector<memory_version>>;
    b.insert(s, e, n);
    b.update(s, e, n);
    b.erase(s, id, n);
    requires !versioned_memory_backend<B> || requires(std::uint64_t v) {
        { b.insert_if(s, e, v, n) } -> std::same_as<std::optional<std::uint64_t>>;
    };
};

/// Turns text into a vector (one embedder is shared with the knowledge base). nullopt = unavailable right now:
/// memory then degrades to keywords only, silently. Must be thread-safe; may block on the network.
template <class E>
concept embedder = requires(E& e, std::string_view text) {
    { e.embed(text) } -> std::same_as<std::optional<std::vector<float>>>;
};

/// Where created_at comes from (tests use a manual clock).
template <class C>
concept wall_clock = requires(const C& c) {
    { c.now() } -> std::convertible_to<std::chrono::system_clock::time_point>;
};

namespace detail {
/// What the manager hands a tokenizer: a lambda, i.e. a class type callable with one std::string_view. A
/// tokenizer checked against a function pointer instead would pass the concept and fail inside the manager.
struct token_sink_archetype {
    token_sink_archetype() = delete;
    void operator()(std::string_view) const;
};
} // namespace detail

/// A tokenizer policy for memory: called with lower-cased text, emits string_views into it (repeats allowed;
/// keyword search relies on every token being a substring of that text).
template <class T>
concept memory_tokenizer = requires(const T& t, std::string_view lowered, detail::token_sink_archetype& emit) {
    t(lowered, emit);
};

/// A tokenizer that promises the reference tokens (cjk_bigram_tokenizer's: see for_each_token_lowered) by
/// declaring `static constexpr bool cjk_bigram_tokens = true`. The manager then indexes and checks with its
/// fused one-pass code instead of calling the tokenizer per token; a wrapper that keeps the tokens (adds
/// logging, counts calls) keeps the fast path by saying so, one that changes them must not say it.
template <class T>
concept cjk_bigram_compatible = memory_tokenizer<T> && requires {
    requires std::bool_constant<T::cjk_bigram_tokens>::value;
};

/// A near-duplicate policy. The memory manager computes, over token sets, the weighted intersection I and the
/// weights W(A), W(B) of the candidate and of each stored entry, with `weight(df, n)` per token (df: entries
/// of the scope holding it, n: entries in the scope), and calls `score(I, W(A), W(B), numbers_differ)`; an
/// entry is a near duplicate when the score reaches `threshold`. `numbers_differ` is true when both texts
/// contain numbers and their sets of numeric tokens differ.
/// `P::weighted` (a constant) says whether `weight` varies: false lets the manager count the intersection
/// with integers instead of summing weights.
template <class P>
concept similarity_policy = requires(const P& p, std::size_t df, std::size_t n, double x, bool b) {
    { p.threshold } -> std::convertible_to<double>;
    { p.weight(df, n) } -> std::convertible_to<double>;
    { p.score(x, x, x, b) } -> std::convertible_to<double>;
    { std::bool_constant<P::weighted>{} };
};

// ---- archetypes ----------------------------------------------------------------------------------------

struct memory_backend_archetype {
    bool enabled();
    std::vector<entry> load(const scope&);
    std::vector<std::string> scopes();
    void insert(const scope&, const entry&);
    void update(const scope&, const entry&);
    void erase(const scope&, std::string_view);
};
struct versioned_memory_backend_archetype {
    bool enabled();
    std::vector<entry> load(const scope&);
    std::vector<std::string> scopes();
    std::uint64_t version(const scope&);
    std::optional<std::uint64_t> insert_if(const scope&, const entry&, std::uint64_t);
    std::uint64_t insert(const scope&, const entry&);
    std::uint64_t update(const scope&, const entry&);
    std::uint64_t erase(const scope&, std::string_view);
};
struct history_memory_backend_archetype : memory_backend_archetype {
    using memory_backend_archetype::erase;
    using memory_backend_archetype::insert;
    using memory_backend_archetype::update;
    std::vector<memory_version> history(const scope&, std::string_view);
    void insert(const scope&, const entry&, const version_note&);
    void update(const scope&, const entry&, const version_note&);
    void erase(const scope&, std::string_view, const version_note&);
};
struct embedder_archetype {
    std::optional<std::vector<float>> embed(std::string_view);
};
struct wall_clock_archetype {
    std::chrono::system_clock::time_point now() const;
};
struct memory_tokenizer_archetype {
    template <class Emit>
    void operator()(std::string_view lowered, Emit&& emit) const;
};
struct similarity_policy_archetype {
    double threshold;
    static constexpr bool weighted = true;
    double weight(std::size_t df, std::size_t n) const;
    double score(double inter, double wa, double wb, bool numbers_differ) const;
};

static_assert(memory_backend<memory_backend_archetype> && !versioned_memory_backend<memory_backend_archetype>);
static_assert(versioned_memory_backend<versioned_memory_backend_archetype>);
static_assert(history_memory_backend<history_memory_backend_archetype> && !history_memory_backend<memory_backend_archetype>);
static_assert(embedder<embedder_archetype>);
static_assert(wall_clock<wall_clock_archetype>);
static_assert(memory_tokenizer<memory_tokenizer_archetype> && !cjk_bigram_compatible<memory_tokenizer_archetype>);
static_assert(similarity_policy<similarity_policy_archetype>);
static_assert(embedder<no_embedder>);
static_assert(wall_clock<system_wall_clock>);

} // namespace ania::memory
