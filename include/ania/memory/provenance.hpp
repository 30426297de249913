// ania/memory/provenance.hpp -- who changed a memory, and what it said before: the versions of an entry.
// SPDX-License-Identifier: MIT
#pragma once

#include <cstddef>
#include <cstdint>
#include <iterator>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <ania/memory/entry.hpp>

namespace ania::memory {

/// What one version records.
enum class change_kind : std::uint8_t {
    saved,      ///< memory_save (or an admin create)
    updated,    ///< memory_update (or an admin edit)
    forgotten,  ///< memory_forget (or an admin delete): the version holds what was forgotten
    restored,   ///< an operator brought back an earlier version
    baseline,   ///< the entry as it was before its first recorded change (a row from before versions were kept)
};

[[nodiscard]] constexpr std::string_view to_string(change_kind k) noexcept {
    switch (k) {
    case change_kind::saved: return "saved";
    case change_kind::updated: return "updated";
    case change_kind::forgotten: return "forgotten";
    case change_kind::restored: return "restored";
    case change_kind::baseline: return "baseline";
    }
    return "updated";
}
/// The kind a stored text names; nullopt for a text no version of ania wrote.
[[nodiscard]] constexpr std::optional<change_kind> change_kind_from(std::string_view s) noexcept {
    for (const change_kind k : {change_kind::saved, change_kind::updated, change_kind::forgotten, change_kind::restored,
                                change_kind::baseline})
        if (to_string(k) == s) return k;
    return std::nullopt;
}

/// Who is making the changes on this thread. The memory tools set it for the tool call they run (actor
/// "model", the session their scope belongs to, the model's tool call id); admin_source sets actor "admin"
/// when nobody said otherwise; code of your own sets it with `acting_as`. Read by the manager when it
/// records a version.
struct change_origin {
    std::string actor;         ///< "model", "admin", or what the caller says ("" = not said)
    std::string session;       ///< the conversation whose model made the change ("" outside a session)
    std::string tool_call_id;  ///< the model's tool call id ("" outside a tool call)
};

namespace detail {
inline const change_origin*& origin_slot() noexcept {
    thread_local const change_origin* current = nullptr;
    return current;
}
} // namespace detail

/// The origin set on this thread (an empty one when nobody set it).
[[nodiscard]] inline const change_origin& current_origin() noexcept {
    static const change_origin none;
    const change_origin* p = detail::origin_slot();
    return p ? *p : none;
}

/// Sets the origin of this thread's memory changes for its lifetime (nested: the innermost wins, the outer
/// one is back when it ends). Not movable: it lives on the stack of the code that changes memory.
class acting_as {
public:
    explicit acting_as(change_origin o) : origin_(std::move(o)), outer_(detail::origin_slot()) { detail::origin_slot() = &origin_; }
    ~acting_as() { detail::origin_slot() = outer_; }
    acting_as(const acting_as&) = delete;
    acting_as& operator=(const acting_as&) = delete;

private:
    change_origin origin_;
    const change_origin* outer_;
};

/// One version of a memory: the entry as the change left it (for `forgotten`, as it was when forgotten),
/// and who made the change, when, through which tool call. `seq` counts 1, 2, ... per entry and scope.
struct memory_version {
    std::uint64_t seq = 0;
    change_kind kind = change_kind::updated;
    change_origin origin;
    std::string at;  ///< when (UTC, the entries' fixed-width format)
    std::string user_id;
    std::string content;
    std::vector<std::string> tags;
    friend bool operator==(const memory_version& a, const memory_version& b) {
        return a.seq == b.seq && a.kind == b.kind && a.origin.actor == b.origin.actor && a.origin.session == b.origin.session &&
               a.origin.tool_call_id == b.origin.tool_call_id && a.at == b.at && a.user_id == b.user_id &&
               a.content == b.content && a.tags == b.tags;
    }
};

/// What the manager hands a backend with a write, to be recorded in the same transaction: the version (its
/// seq is the backend's: one more than the entry's last), the entry before the change when there was one
/// (recorded first as a `baseline` version when the entry has no version yet), and how many versions the
/// entry keeps (the oldest beyond are dropped).
struct version_note {
    memory_version version;
    const entry* previous = nullptr;
    std::size_t keep = 20;

    /// The version for `e` as a change of `kind` by the current origin, at `at`.
    [[nodiscard]] static version_note of(change_kind kind, const entry& e, std::string at, const entry* previous, std::size_t keep) {
        version_note n;
        n.version.kind = kind;
        n.version.origin = current_origin();
        n.version.at = std::move(at);
        n.version.user_id = e.user_id;
        n.version.content = e.content;
        n.version.tags = e.tags;
        n.previous = previous;
        n.keep = keep;
        return n;
    }
    /// The baseline version of `previous` (seq 1).
    [[nodiscard]] memory_version baseline() const {
        memory_version b;
        b.seq = 1;
        b.kind = change_kind::baseline;
        b.at = previous->created_at;
        b.user_id = previous->user_id;
        b.content = previous->content;
        b.tags = previous->tags;
        return b;
    }
};

namespace detail {
/// Records `n` in an entry's list of versions, oldest first (what a backend without SQL does).
inline void record_version(std::vector<memory_version>& list, const version_note& n) {
    if (list.empty() && n.previous) list.push_back(n.baseline());
    memory_version v = n.version;
    v.seq = list.empty() ? 1 : list.back().seq + 1;
    list.push_back(std::move(v));
    if (list.size() > n.keep) list.erase(list.begin(), list.end() - static_cast<std::ptrdiff_t>(n.keep));
}
} // namespace detail

} // namespace ania::memory
