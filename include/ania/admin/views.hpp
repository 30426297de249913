// ania/admin/views.hpp -- what the operator's console sees of a bot: its long-term memory, its resident
// sessions, their stored history and archive, and the context size of their recent turns. Each is an
// interface with an adapter over the ania part that provides it, so that the console (admin/api.hpp,
// admin/console.hpp) is one non-template type whatever the bot's traits.
// SPDX-License-Identifier: MIT
#pragma once

#include <algorithm>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <ania/agent/chat.hpp>
#include <ania/concepts.hpp>
#include <ania/defaults.hpp>
#include <ania/history/archive.hpp>
#include <ania/log.hpp>
#include <ania/memory/admin.hpp>
#include <ania/message.hpp>
#include <ania/session/results.hpp>

namespace ania::admin {

/// Long-term memory as the operator manages it (SPEC §4 MemorySource). Scopes are validated against
/// ^[gf]:\d+$ before anything is read; failures are ania::error (invalid_argument, not_found, store_error).
class memory_view {
public:
    virtual ~memory_view() = default;
    [[nodiscard]] virtual std::vector<std::string> scopes() = 0;
    /// Every entry, newest first; with a query, the entries that match it, best first.
    [[nodiscard]] virtual std::vector<memory::entry> list(std::string_view scope, std::string_view query) = 0;
    virtual memory::entry create(std::string_view scope, std::string_view content, std::string_view user_id,
                                 std::vector<std::string> tags) = 0;
    virtual memory::entry update(std::string_view scope, std::string_view id, std::optional<std::string_view> content,
                                 std::optional<std::string_view> user_id, std::optional<std::vector<std::string>> tags) = 0;
    virtual void remove(std::string_view scope, std::string_view id) = 0;
    [[nodiscard]] virtual std::vector<memory::memory_version> history(std::string_view scope, std::string_view id) = 0;
    virtual memory::entry restore(std::string_view scope, std::string_view id, std::uint64_t seq) = 0;
};

/// memory_view over a memory::basic_manager (through memory::admin_source).
template <class Manager>
class memory_view_of final : public memory_view {
public:
    explicit memory_view_of(Manager& m) : m_(m), src_(m) {}
    std::vector<std::string> scopes() override { return src_.scopes(); }
    std::vector<memory::entry> list(std::string_view scope, std::string_view query) override {
        if (query.empty()) {
            std::vector<memory::entry> all = src_.list(scope);
            std::reverse(all.begin(), all.end());
            return all;
        }
        std::vector<memory::entry> out;
        for (memory::search_hit& h : m_.search(memory::scope::from(scope), query)) out.push_back(std::move(h.item));
        return out;
    }
    memory::entry create(std::string_view scope, std::string_view content, std::string_view user_id, std::vector<std::string> tags) override {
        return src_.create(scope, content, user_id, std::move(tags));
    }
    memory::entry update(std::string_view scope, std::string_view id, std::optional<std::string_view> content,
                         std::optional<std::string_view> user_id, std::optional<std::vector<std::string>> tags) override {
        return src_.update(scope, id, content, user_id, std::move(tags));
    }
    void remove(std::string_view scope, std::string_view id) override { src_.remove(scope, id); }
    std::vector<memory::memory_version> history(std::string_view scope, std::string_view id) override { return src_.history(scope, id); }
    memory::entry restore(std::string_view scope, std::string_view id, std::uint64_t seq) override { return src_.restore(scope, id, seq); }

private:
    Manager& m_;
    memory::admin_source<Manager> src_;
};

/// One turn of a session, for the console's chart of its context size.
struct turn_point {
    std::int64_t at_ms = 0;          ///< Unix time of the turn's end, milliseconds
    std::int64_t context_tokens = 0; ///< the prompt tokens of its last model call (0: the model did not say)
    std::size_t messages = 0;        ///< messages the turn added
    bool compressed = false;         ///< the history was compressed during the turn
    bool ok = false;                 ///< it replied
};

/// The last `kept` turns of each session (a bot records every turn here; bounded: `sessions` sessions,
/// the least recently recorded dropped first). Thread-safe.
class turn_log {
public:
    explicit turn_log(std::size_t kept = defaults::admin_turns_kept, std::size_t sessions = 4096) : kept_(kept), max_sessions_(sessions) {}
    void record(std::string_view session, const chat_result& r) {
        turn_point p;
        p.at_ms = std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::system_clock::now().time_since_epoch()).count();
        p.context_tokens = r.stats.last_prompt_tokens;
        p.messages = r.messages.size();
        p.compressed = r.compressions > 0;
        p.ok = r.ok();
        std::lock_guard l(m_);
        auto it = turns_.find(session);
        if (it == turns_.end()) {
            if (turns_.size() >= max_sessions_) drop_stalest();
            it = turns_.emplace(std::string(session), per_session{}).first;
        }
        it->second.last = ++clock_;
        it->second.points.push_back(p);
        if (it->second.points.size() > kept_) it->second.points.pop_front();
    }
    [[nodiscard]] std::vector<turn_point> of(std::string_view session) const {
        std::lock_guard l(m_);
        const auto it = turns_.find(session);
        return it == turns_.end() ? std::vector<turn_point>{} : std::vector<turn_point>(it->second.points.begin(), it->second.points.end());
    }
    void forget(std::string_view session) {
        std::lock_guard l(m_);
        if (const auto it = turns_.find(session); it != turns_.end()) turns_.erase(it);
    }

private:
    struct per_session {
        std::deque<turn_point> points;
        std::uint64_t last = 0;
    };
    void drop_stalest() {  // O(sessions), at most once per new session past the bound
        auto stalest = turns_.begin();
        for (auto it = turns_.begin(); it != turns_.end(); ++it)
            if (it->second.last < stalest->second.last) stalest = it;
        if (stalest != turns_.end()) turns_.erase(stalest);
    }
    mutable std::mutex m_;
    std::map<std::string, per_session, std::less<>> turns_;
    std::size_t kept_, max_sessions_;
    std::uint64_t clock_ = 0;
};

/// A stored history page: `messages` are [offset, offset + messages.size()) of `total`.
struct history_page {
    std::size_t total = 0;
    std::size_t offset = 0;
    std::vector<message> messages;
};

/// The conversations: the resident sessions of a session cache, their stored history and archive.
class session_view {
public:
    virtual ~session_view() = default;
    [[nodiscard]] virtual std::vector<session_info> resident() = 0;
    /// True when it was evicted (false: not resident, or responding or queued: try again).
    virtual bool evict(std::string_view session) = 0;
    /// Forgets the conversation (window, stored history); long-term memory stays.
    virtual void clear(std::string_view session) = 0;
    [[nodiscard]] virtual history_page stored(std::string_view session, std::size_t offset, std::size_t limit) = 0;
    /// The archive (what compactions removed), when the store keeps one.
    [[nodiscard]] virtual std::optional<archive_slice> archive(std::string_view session, std::int64_t from, std::size_t limit) = 0;
    [[nodiscard]] virtual std::vector<turn_point> turns(std::string_view session) = 0;
};

/// session_view over a session_cache and the store (or background writer: queued appends are seen) its
/// agents load from. `turns` may be null (no chart); a clear forgets the session's points there too. The archive is read when Source::store_type is an
/// archiving_store.
template <class Sessions, class Source>
class session_view_of final : public session_view {
public:
    session_view_of(Sessions& sessions, Source& source, turn_log* turns = nullptr) : sessions_(sessions), source_(source), turns_(turns) {}
    std::vector<session_info> resident() override { return sessions_.snapshot(); }
    bool evict(std::string_view session) override { return sessions_.evict(session); }
    void clear(std::string_view session) override {
        sessions_.clear(session);
        if (turns_) turns_->forget(session);  // a new conversation: its chart starts over
    }
    history_page stored(std::string_view session, std::size_t offset, std::size_t limit) override {
        std::vector<message> all = source_.load(session);
        history_page p;
        p.total = all.size();
        p.offset = std::min(offset, all.size());
        const std::size_t end = p.offset + std::min(limit, all.size() - p.offset);
        p.messages.assign(std::make_move_iterator(all.begin() + static_cast<std::ptrdiff_t>(p.offset)),
                          std::make_move_iterator(all.begin() + static_cast<std::ptrdiff_t>(end)));
        return p;
    }
    std::optional<archive_slice> archive(std::string_view session, std::int64_t from, std::size_t limit) override {
        if constexpr (requires { source_.read_archive(session, from, limit); }) {
            return source_.read_archive(session, from, limit);
        } else {
            return std::nullopt;
        }
    }
    std::vector<turn_point> turns(std::string_view session) override { return turns_ ? turns_->of(session) : std::vector<turn_point>{}; }

private:
    Sessions& sessions_;
    Source& source_;
    turn_log* turns_;
};

/// The views a console serves; either may be null (its routes then answer 404).
struct api_parts {
    memory_view* memory = nullptr;
    session_view* sessions = nullptr;
    log_sink log{};  ///< every change, with the operator's address (info); failures of the views (error)
};

} // namespace ania::admin
