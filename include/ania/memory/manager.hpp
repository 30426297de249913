// ania/memory/manager.hpp -- long-term memory (SPEC §4): save with dedup, update, forget, search, per scope.
// SPDX-License-Identifier: MIT
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <exception>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <shared_mutex>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>
#include <vector>

#include <ania/detail/linkage.hpp>
#include <ania/detail/timestamp.hpp>
#include <ania/error.hpp>
#include <ania/log.hpp>
#include <ania/memory/concepts.hpp>
#include <ania/memory/entry.hpp>
#include <ania/memory/inject.hpp>
#include <ania/memory/options.hpp>
#include <ania/memory/provenance.hpp>
#include <ania/memory/ram_backend.hpp>
#include <ania/memory/similarity.hpp>
#include <ania/memory/tokenize.hpp>
#include <ania/memory/traits.hpp>
#include <ania/text/utf8.hpp>

namespace ania::memory {

namespace detail {
struct scope_index;
/// Complete where basic_manager<Traits>'s member definitions can be used: everywhere in header-only mode
/// (<ania/memory/manager-inl.hpp> defines it), and in compiled mode for the traits the library instantiates.
template <class Traits>
struct manager_definitions_for;
#if !ANIA_HEADER_ONLY
template <>
struct manager_definitions_for<default_memory_traits> {};
#endif
} // namespace detail

/// Long-term memory for every scope, backed by `Traits::backend`, with an index per scope kept up to date on
/// save, update and forget (token ids, an inverted index, lower-cased text, pair filters, vector norms), so
/// neither the near-duplicate check nor keyword search re-tokenises the scope. Scopes are loaded on first use.
/// Every entry point answers "disabled" (or nothing) when the backend is not enabled (SPEC §4).
/// Thread-safe: each scope has its own reader-writer lock. Operations on different scopes run in parallel, and
/// so do the reads of one scope (list, get, search, scores, size, stats: an operator listing a scope does not
/// hold up a turn's search in it); a write (save, update, restore, forget, reload) has the scope to itself, so a
/// huge query in one scope delays only that scope's writes. The embedder is called outside any lock. The
/// backend must outlive the manager.
template <class Traits = default_memory_traits>
class basic_manager {
public:
    using traits_type = Traits;
    using backend_type = typename Traits::backend;
    using embedder_type = typename Traits::embedder;
    using tokenizer_type = typename Traits::tokenizer;
    using clock_type = typename Traits::clock;
    using similarity_type = typename Traits::similarity;
    using policies = memory_policies<Traits>;

    static_assert(memory_backend<backend_type>, "Traits::backend must model ania::memory::memory_backend (memory/concepts.hpp)");
    static_assert(memory::embedder<embedder_type>, "Traits::embedder must model ania::memory::embedder (memory/concepts.hpp)");
    static_assert(memory_tokenizer<tokenizer_type>, "Traits::tokenizer must model ania::memory::memory_tokenizer (memory/concepts.hpp)");
    static_assert(wall_clock<clock_type>, "Traits::clock must model ania::memory::wall_clock (memory/concepts.hpp)");
    static_assert(similarity_policy<similarity_type>, "Traits::similarity must model ania::memory::similarity_policy (memory/concepts.hpp)");
    static_assert(requires { sizeof(detail::manager_definitions_for<Traits>); },
                  "compiled mode: a basic_manager over traits of your own needs #include <ania/memory/manager-inl.hpp> "
                  "before it is used (the library instantiates the shipped traits only)");

    explicit basic_manager(backend_type& backend, manager_options opt = {}, policies p = {});
    ~basic_manager();
    basic_manager(const basic_manager&) = delete;
    basic_manager& operator=(const basic_manager&) = delete;

    /// False when the backend could not be set up: register no memory tools then (SPEC §4).
    [[nodiscard]] bool enabled() const { return backend_.enabled(); }
    [[nodiscard]] const manager_options& options() const noexcept { return opt_; }
    /// The near-duplicate policy. Weights are cached per scope: changing how the policy weighs tokens
    /// takes effect for a scope after its next change or reindex().
    [[nodiscard]] similarity_type& similarity() noexcept { return sim_; }

    /// The content as it would be stored: trimmed, then cut to max_content_runes (rune-safe), valid UTF-8.
    [[nodiscard]] std::string clean_content(std::string_view raw) const { return clean(raw, opt_.max_content_runes); }
    /// A user id as it would be stored: valid UTF-8, trimmed, cut to max_user_id_runes.
    [[nodiscard]] std::string clean_user_id(std::string_view raw) const { return clean(raw, opt_.max_user_id_runes); }
    /// Tags as they would be stored: each valid UTF-8, trimmed and cut to max_tag_runes; empty ones dropped;
    /// at most max_tags (the first ones).
    [[nodiscard]] std::vector<std::string> clean_tags(const std::vector<std::string>& raw) const;

    /// memory_save: see save_status. An exact duplicate (the same normal form: white space folded, and with
    /// exact_duplicate_fold::width_and_case also full-width forms and case) is not written; a near duplicate
    /// is written and reported; a full scope is refused; ids are 8 random hex digits, never reused in the scope.
    save_result save(const scope& s, std::string_view content, std::string_view user_id = {}, std::vector<std::string> tags = {});

    /// memory_update: by id. Absent fields are kept; an empty user_id or tags list clears it; a content change
    /// recomputes the vector; created_at is kept.
    update_result update(const scope& s, std::string_view id, std::optional<std::string_view> content, std::optional<std::string_view> user_id, std::optional<std::vector<std::string>> tags);

    /// memory_forget: forgotten when the entry existed and is gone; a backend failure leaves the index as the
    /// backend is (status failed, with the reason).
    forget_result forget(const scope& s, std::string_view id);

    /// The versions of an entry, oldest first (memory/provenance.hpp): every save, update, forget and
    /// restore with who made it (the origin set on the calling thread: see acting_as), when, through which
    /// tool call, and what the entry said then. Kept by a backend that models history_memory_backend (the
    /// three shipped ones), at most options().versions_kept per entry; empty otherwise. Versions outlive a
    /// forget.
    std::vector<memory_version> history(const scope& s, std::string_view id);

    /// Brings back version `seq` of an entry (content, user_id, tags; the vector is computed again): an
    /// update when the entry exists, else the entry again under its id (not_found: no such version; full:
    /// the scope is full). Recorded as a `restored` version. No duplicate checks: the operator asked for it.
    update_result restore(const scope& s, std::string_view id, std::uint64_t seq);

    /// memory_search (SPEC §4): without a query every entry, newest first; with one, every entry that scores
    /// > 0, highest first (stable: ties oldest first); see detail::keyword_scores for the score. At most
    /// `limit` hits (0: all). A query is cut to max_query_runes.
    std::vector<search_hit> search(const scope& s, std::string_view query, std::size_t limit = 0);

    /// Keyword (+ vector) scores of every entry of the scope for `query`, oldest first (what search sorts).
    std::vector<double> scores(const scope& s, std::string_view query);

    /// The near-duplicate check alone (what save reports), for a text against the scope.
    near_duplicate_report near_duplicate(const scope& s, std::string_view content);

    /// The scope's entries, oldest first.
    std::vector<entry> list(const scope& s);
    std::optional<entry> get(const scope& s, std::string_view id);
    /// Entries in the scope (loading and indexing it if needed).
    std::size_t size(const scope& s);

    /// How big a scope's in-memory index is (loading it if needed).
    scope_stats stats(const scope& s);

    /// Scopes that hold memories (from the backend).
    std::vector<std::string> scopes() const { return enabled() ? backend_.scopes() : std::vector<std::string>{}; }

    /// The auto-inject block (see memory::inject_block in memory/inject.hpp).
    std::string inject_block(const scope& s, std::string_view user_text, std::string_view header = default_inject_header);

    /// Embeds up to `max_entries` entries that have no vector yet (the embedder was absent or failing when
    /// they were saved). Call it periodically (see embedding_backfill). Returns how many got a vector.
    std::size_t backfill(std::size_t max_entries);

    /// Drops the in-memory index of a scope (it is rebuilt from the backend on next use).
    void reload(const scope& s);

    /// Indexes a loaded scope again from the entries it holds (without reading the backend): a compact
    /// vocabulary and fresh postings. The manager does this by itself when updates and forgets have left
    /// the vocabulary mostly dead; loads the scope first if it is not loaded.
    void reindex(const scope& s);

private:
    [[nodiscard]] static std::string clean(std::string_view raw, std::size_t max_runes);

    template <class Result, class Status>
    Result failed(const std::exception& ex, const char* what) const;

    /// Runs one backend write for the scope. With a versioned backend the scope's index keeps the version
    /// the write produced when it is the next one (nobody else wrote in between), and is marked stale
    /// otherwise, so that it is reloaded before its next use.
    template <class Write>
    void write_backend(detail::scope_index& si, Write&& w);

    std::vector<float> embed(const std::string& text);

    /// Whether writes are recorded as versions.
    [[nodiscard]] bool recording() const noexcept {
        if constexpr (history_memory_backend<backend_type>) return opt_.versions_kept > 0;
        else return false;
    }
    /// The backend's update / erase, with the change's version when recording.
    std::uint64_t backend_update(const scope& s, const entry& e, change_kind kind, const entry& before);
    std::uint64_t backend_erase(const scope& s, const entry& before);
    /// The backend's insert_if (versioned backends) or insert, with the version when recording: nullopt when the
    /// scope moved past `expected`.
    std::optional<std::uint64_t> backend_insert(const scope& s, const entry& e, std::uint64_t expected, change_kind kind);
    /// The one place that decides whether a backend call carries a version: `call(note())` when recording,
    /// else `call()` (a backend without history is never asked with one).
    template <class Note, class Call>
    auto recorded(Note&& note, Call&& call);

    /// One scope's index behind its own lock: operations on different scopes run in parallel. Slots are made
    /// once and never freed (reload() empties one), so a reference stays valid without the map's lock.
    struct slot;
    /// The index and near-duplicate engines and the id generator: defined with the member functions
    /// (manager-inl.hpp), so that a file that only holds or calls a manager does not parse them.
    struct engine;

    slot& slot_of(const scope& s);

    /// The scope's index (under sl.mutex), loaded and built on first use; with a versioned backend, loaded
    /// again when someone else changed the scope since (another process or manager on the same file). A
    /// failed load leaves the slot unloaded, nothing half-built.
    detail::scope_index& index_of(slot& sl, const scope& s);
    /// Under the slot's lock (either kind): loaded, and for a versioned backend still at the stored version.
    bool is_current(const slot& sl, const scope& s);

    /// For a read: `f(const scope_index&)` under the slot's shared lock when the index is loaded, current
    /// (versioned backends) and, if `postings`, with its postings built, so that the readers of one scope run
    /// side by side (an operator listing a scope does not hold up a turn's search in it); else under the
    /// exclusive lock, after index_of (and ensure_postings).
    template <class F>
    auto read_index(slot& sl, const scope& s, bool postings, F&& f);

    std::string fresh_id(const detail::scope_index& si);

    /// Now, but strictly after the scope's newest entry, so that text order stays insertion order.
    std::string next_timestamp(const detail::scope_index& si);

    backend_type& backend_;
    manager_options opt_;
    [[no_unique_address]] embedder_type embedder_;
    [[no_unique_address]] tokenizer_type tokenizer_;
    [[no_unique_address]] clock_type clock_;
    similarity_type sim_;
    std::unique_ptr<engine> engine_;  // refers to tokenizer_
    std::shared_mutex map_mutex_;  // the map's shape only; each scope has its own lock
    std::map<std::string, std::unique_ptr<slot>, std::less<>> scopes_;
};

/// The spec's memory over the in-process backend (tests, bots without persistence).
using manager = basic_manager<default_memory_traits>;

#if !ANIA_HEADER_ONLY
extern template class basic_manager<default_memory_traits>;  // in the compiled library
#endif


} // namespace ania::memory

#if ANIA_HEADER_ONLY
#include <ania/memory/manager-inl.hpp>
#endif
