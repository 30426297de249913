// ania/store/ram_store-inl.hpp -- the definitions of <ania/store/ram_store.hpp>.
// Header-only mode includes this from there; compiled mode compiles it once, in the library (see
// <ania/detail/linkage.hpp>).
// SPDX-License-Identifier: MIT
#pragma once

#include <ania/detail/linkage.hpp>
#if !ANIA_HEADER_ONLY && !defined(ANIA_BUILDING_LIBRARY)
static_assert(false, "compiled mode: the library defines what <ania/store/ram_store-inl.hpp> defines; include <ania/store/ram_store.hpp>");
#endif

#include <ania/store/ram_store.hpp>

namespace ania {

ANIA_INLINE auto ram_store::load(std::string_view session) const -> std::vector<message> {
    std::lock_guard lock(mutex_);
    const auto it = sessions_.find(session);
    return it == sessions_.end() ? std::vector<message>{} : it->second;
}

ANIA_INLINE auto ram_store::append(std::string_view session, std::span<const message> msgs) -> void {
    if (msgs.empty()) return;
    std::lock_guard lock(mutex_);
    auto& h = slot(session);
    h.insert(h.end(), msgs.begin(), msgs.end());
}

ANIA_INLINE auto ram_store::replace(std::string_view session, std::span<const message> msgs) -> void {
    std::lock_guard lock(mutex_);
    slot(session).assign(msgs.begin(), msgs.end());
}

ANIA_INLINE auto ram_store::clear(std::string_view session) -> void {
    std::lock_guard lock(mutex_);
    if (const auto it = sessions_.find(session); it != sessions_.end()) sessions_.erase(it);
    if (!archive_opt_.keep_on_clear) clear_archive_locked(session);
}

ANIA_INLINE auto ram_store::drop_front(std::string_view session, std::size_t k) -> void {
    std::lock_guard lock(mutex_);
    const auto it = sessions_.find(session);
    if (it == sessions_.end()) return;
    auto& h = it->second;
    h.erase(h.begin(), h.begin() + static_cast<std::ptrdiff_t>(std::min(k, h.size())));
}

ANIA_INLINE auto ram_store::replace_archiving(std::string_view session, std::span<const message> msgs,
                                              const archive_batch& batch) -> void {
    std::vector<message> next(msgs.begin(), msgs.end());  // copies first: nothing changes if one throws
    std::lock_guard lock(mutex_);
    archive_locked(session, batch);
    slot(session) = std::move(next);
}

ANIA_INLINE auto ram_store::drop_front_archiving(std::string_view session, std::size_t k, const archive_batch& batch) -> void {
    std::lock_guard lock(mutex_);
    archive_locked(session, batch);
    const auto it = sessions_.find(session);
    if (it == sessions_.end()) return;
    auto& h = it->second;
    h.erase(h.begin(), h.begin() + static_cast<std::ptrdiff_t>(std::min(k, h.size())));
}

ANIA_INLINE auto ram_store::read_archive(std::string_view session, std::int64_t from, std::size_t count) const -> archive_slice {
    std::lock_guard lock(mutex_);
    archive_slice out;
    const auto it = archives_.find(session);
    if (it == archives_.end()) return out;
    const archive& a = it->second;
    out.first_seq = a.first_seq;
    out.next_seq = a.next_seq;
    const std::int64_t begin = std::max(from, a.first_seq);
    if (begin >= a.next_seq || count == 0) return out;
    const std::size_t n = std::min(count, static_cast<std::size_t>(a.next_seq - begin));
    const auto first = a.rows.begin() + (begin - a.first_seq);
    out.messages.assign(first, first + static_cast<std::ptrdiff_t>(n));
    const std::int64_t end = begin + static_cast<std::int64_t>(n);
    for (const archive_summary& s : a.summaries)
        if (s.first_seq < end && s.first_seq + s.count > begin) out.summaries.push_back(s);
    return out;
}

ANIA_INLINE auto ram_store::clear_archive(std::string_view session) -> void {
    std::lock_guard lock(mutex_);
    clear_archive_locked(session);
}

ANIA_INLINE auto ram_store::archive_locked(std::string_view session, const archive_batch& batch) -> void {
    if (batch.messages.empty()) return;
    auto it = archives_.find(session);
    if (it == archives_.end()) it = archives_.emplace(std::string(session), archive{}).first;
    archive& a = it->second;
    a.summaries.push_back({a.next_seq, static_cast<std::int64_t>(batch.messages.size()), batch.summary, batch.archived_at});
    for (const message& m : batch.messages) {
        const std::size_t b = archived_bytes(m);
        a.rows.push_back({a.next_seq++, batch.archived_at, m});
        a.bytes.push_back(b);
        a.total_bytes += b;
    }
    const detail::archive_trim trim = detail::archive_cut(a.first_seq, a.rows.size(), a.total_bytes, archive_opt_,
                                                          [&](std::size_t i) { return a.bytes[i]; });
    const auto gone = static_cast<std::ptrdiff_t>(trim.first_seq - a.first_seq);
    a.rows.erase(a.rows.begin(), a.rows.begin() + gone);
    a.bytes.erase(a.bytes.begin(), a.bytes.begin() + gone);
    a.first_seq = trim.first_seq;
    a.total_bytes = trim.bytes;
    std::erase_if(a.summaries, [&](const archive_summary& s) { return s.first_seq + s.count <= a.first_seq; });
}

ANIA_INLINE auto ram_store::clear_archive_locked(std::string_view session) -> void {
    const auto it = archives_.find(session);
    if (it == archives_.end()) return;
    archive& a = it->second;  // the numbers stay: a seq is never reused
    a.rows.clear();
    a.bytes.clear();
    a.summaries.clear();
    a.total_bytes = 0;
    a.first_seq = a.next_seq;
}

ANIA_INLINE auto ram_store::size() const -> std::size_t {
    std::lock_guard lock(mutex_);
    return sessions_.size();
}

ANIA_INLINE auto ram_store::slot(std::string_view session) -> std::vector<message>& {
    auto it = sessions_.find(session);
    if (it == sessions_.end()) it = sessions_.emplace(std::string(session), std::vector<message>{}).first;
    return it->second;
}

} // namespace ania
