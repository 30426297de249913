// ania/memory/options.hpp -- what a memory manager is told (manager_options) and what it answers (the results).
// SPDX-License-Identifier: MIT
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <ania/defaults.hpp>
#include <ania/log.hpp>
#include <ania/memory/entry.hpp>
#include <ania/memory/tokenize.hpp>

namespace ania::memory {

/// The manager's limits and modes; `from_config<manager_options>(cfg)` (config.hpp) reads them from memory.*.
struct manager_options {
    std::size_t max_entries = defaults::memory_max_entries;              ///< memory.max_entries, per scope
    std::size_t max_content_runes = defaults::memory_max_content_runes;  ///< one entry's content is cut to this
    std::size_t inject_entries = defaults::memory_inject_entries;        ///< auto-inject: at most this many entries
    std::size_t inject_runes = defaults::memory_inject_runes;  ///< auto-inject: about this many runes of block, and of query tail
    /// The similarity policy's threshold (memory.near_duplicate_threshold); empty: the policy's own
    /// (0.55 for the spec's Dice).
    std::optional<double> near_duplicate_threshold;
    /// What "the same content" means for exact duplicates (see exact_duplicate_fold).
    exact_duplicate_fold exact_fold = exact_duplicate_fold::white_space;
    // What a model may store besides the content, and what a query may cost: longer is cut, more is
    // dropped (the first ones kept), so a 10 MB tag or 100,000 tags cannot reach the store or every reply.
    std::size_t max_user_id_runes = defaults::memory_max_user_id_runes;
    std::size_t max_tags = defaults::memory_max_tags;
    std::size_t max_tag_runes = defaults::memory_max_tag_runes;
    std::size_t max_query_runes = defaults::memory_max_query_runes;  ///< memory_search: a longer query is cut
    /// Versions kept per entry by a backend that records them (memory/provenance.hpp; memory.versions_kept):
    /// the oldest beyond are dropped; 0 records none.
    std::size_t versions_kept = defaults::memory_versions_kept;
    std::uint64_t seed = 0;  ///< id generator seed; 0 = from std::random_device
    log_sink log = stderr_log_sink();
};

/// One entry and how alike it is to something.
struct similar_entry {
    std::size_t index;  ///< position in the scope, oldest first
    std::string id;
    double score;
};

/// The near-duplicate check of one text against a scope: the best match (ties: the oldest) and every entry
/// at or above the threshold, best first (at most three).
struct near_duplicate_report {
    std::optional<similar_entry> best;
    bool is_duplicate = false;
    std::vector<similar_entry> similar;
};

enum class save_status : std::uint8_t { saved, saved_near_duplicate, exact_duplicate, empty, full, failed, disabled };

struct save_result {
    save_status status = save_status::failed;
    entry saved;                         ///< the new entry, or the existing one for exact_duplicate
    std::vector<similar_entry> similar;  ///< for saved_near_duplicate
    std::string error;                   ///< for failed
};

/// `full`: only a restore of a forgotten entry, into a full scope.
enum class update_status : std::uint8_t { updated, not_found, empty, failed, disabled, full };
struct update_result {
    update_status status = update_status::failed;
    entry updated;
    std::string error;  ///< for failed
};

enum class forget_status : std::uint8_t { forgotten, not_found, failed, disabled };
struct forget_result {
    forget_status status = forget_status::failed;
    std::string error;  ///< for failed
    [[nodiscard]] bool ok() const noexcept { return status == forget_status::forgotten; }
};

/// The size of a scope's in-memory index: its entries, and the distinct tokens its vocabulary holds
/// (including tokens of since-changed entries, until the scope is indexed again).
struct scope_stats {
    std::size_t entries = 0;
    std::size_t vocabulary = 0;
};

struct search_hit {
    std::size_t index;  ///< position in the scope, oldest first
    double score;
    entry item;
};

} // namespace ania::memory
