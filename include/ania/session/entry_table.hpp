// ania/session/entry_table.hpp -- the resident sessions of one shard of a session_cache: key -> entry.
// SPDX-License-Identifier: MIT
#pragma once

#include <cstddef>
#include <memory>
#include <string_view>
#include <utility>
#include <vector>

namespace ania::detail {

/// Open addressing with linear probing over a power-of-two array, at most half full. A slot is the key's
/// hash and the entry, and the entry holds its own key (`Entry::key`), so:
/// - a janitor's scan walks one contiguous array (a node-based map is a chain of dependent cache misses);
/// - removing an entry the scan saw finds its slot by hash and pointer, without comparing a string;
/// - removal shifts the rest of its probe run back (no tombstones: probes stay short under any churn), and
///   `compact()` halves the array once it is under 1/8 full, so memory follows the resident count.
/// Not thread-safe: the cache holds the shard's mutex around every call.
template <class Entry>
class entry_table {
public:
    struct slot {
        std::size_t hash = 0;
        std::shared_ptr<Entry> entry;  // null: empty
    };

    /// The entry stored under `key` (whose hash is `hash`), or null.
    [[nodiscard]] const std::shared_ptr<Entry>* find(std::string_view key, std::size_t hash) const noexcept {
        if (used_ == 0) return nullptr;
        for (std::size_t i = hash & mask(); slots_[i].entry; i = (i + 1) & mask())
            if (slots_[i].hash == hash && slots_[i].entry->key == key) return &slots_[i].entry;
        return nullptr;
    }
    /// Adds an entry whose key is not present.
    void insert(std::size_t hash, std::shared_ptr<Entry> e) {
        if ((used_ + 1) * 2 > slots_.size()) rehash(slots_.empty() ? min_slots : slots_.size() * 2);
        std::size_t i = hash & mask();
        while (slots_[i].entry) i = (i + 1) & mask();
        slots_[i] = {hash, std::move(e)};
        ++used_;
    }
    /// Removes `e` (stored with `hash`) and hands it back; null when it is not in the table.
    [[nodiscard]] std::shared_ptr<Entry> take(const Entry* e, std::size_t hash) noexcept {
        if (used_ == 0) return nullptr;
        std::size_t hole = hash & mask();
        while (slots_[hole].entry.get() != e) {
            if (!slots_[hole].entry) return nullptr;
            hole = (hole + 1) & mask();
        }
        std::shared_ptr<Entry> out = std::move(slots_[hole].entry);
        --used_;
        // Backward shift: a later slot of the run moves into the hole unless its home lies cyclically in
        // (hole, j], where the hole would put it before its home.
        for (std::size_t j = (hole + 1) & mask(); slots_[j].entry; j = (j + 1) & mask()) {
            const std::size_t home = slots_[j].hash & mask();
            const bool stays = hole <= j ? (hole < home && home <= j) : (hole < home || home <= j);
            if (stays) continue;
            slots_[hole] = std::move(slots_[j]);
            hole = j;
        }
        return out;
    }
    /// Halves the array (repeatedly) while it is under 1/8 full.
    void compact() {
        std::size_t size = slots_.size();
        while (size > min_slots && used_ * 8 < size) size /= 2;
        if (size != slots_.size()) rehash(used_ == 0 ? 0 : size);
    }

    [[nodiscard]] std::size_t size() const noexcept { return used_; }
    /// Every slot, empty ones included (an empty slot's entry is null): what a scan walks.
    [[nodiscard]] const std::vector<slot>& slots() const noexcept { return slots_; }
    template <class F>
    void for_each(F&& f) const {
        for (const slot& s : slots_)
            if (s.entry) f(*s.entry);
    }

private:
    static constexpr std::size_t min_slots = 16;
    [[nodiscard]] std::size_t mask() const noexcept { return slots_.size() - 1; }
    void rehash(std::size_t size) {
        std::vector<slot> next(size);
        for (slot& s : slots_) {
            if (!s.entry) continue;
            std::size_t i = s.hash & (size - 1);
            while (next[i].entry) i = (i + 1) & (size - 1);
            next[i] = std::move(s);
        }
        slots_ = std::move(next);
    }

    std::vector<slot> slots_;
    std::size_t used_ = 0;
};

} // namespace ania::detail
