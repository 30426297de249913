// ania/session/hibernation.hpp -- session_options::hibernate: the tools a session added at run time, kept in RAM
// while it is evicted and given back when it is rebuilt (bounded: the oldest are forgotten). Not API.
// SPDX-License-Identifier: MIT
#pragma once

#include <cstddef>
#include <cstdint>
#include <deque>
#include <functional>
#include <mutex>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

#include <ania/session/entry.hpp>
#include <ania/tool.hpp>

namespace ania::detail {

template <class Agent>
class hibernation {
public:
    /// An agent type without run-time tools has nothing to keep: every member is then a no-op.
    static constexpr bool possible = requires(Agent& a) {
        a.tools().session_tools();
        a.add_tool(std::declval<tool>());
    };

    explicit hibernation(std::size_t max) : max_(max) {}

    /// An evicted session's run-time tools, kept for its return.
    void keep(const std::string& key, Agent& a) {
        if constexpr (possible) {
            const auto tools = a.tools().session_tools();
            if (tools.empty() || max_ == 0) return;
            std::lock_guard l(m_);
            kept& h = kept_[key];
            h.tools.assign(tools.begin(), tools.end());
            h.generation = ++generation_;
            order_.emplace_back(key, h.generation);
            // The oldest go past the cap; an order record whose session woke or hibernated again since is
            // stale and skipped, so the order holds at most about twice the records.
            while (!order_.empty() && (kept_.size() > max_ || order_.size() > 2 * kept_.size() + 16)) {
                const auto& [k, g] = order_.front();
                if (const auto it = kept_.find(k); it != kept_.end() && it->second.generation == g) kept_.erase(it);
                order_.pop_front();
            }
        }
    }
    /// A rebuilt session gets its tools back (once).
    void wake(std::string_view key, Agent& a) {
        if constexpr (possible) {
            std::vector<tool> tools;
            {
                std::lock_guard l(m_);
                const auto it = kept_.find(key);
                if (it == kept_.end()) return;
                tools = std::move(it->second.tools);
                kept_.erase(it);
            }
            for (tool& t : tools) a.add_tool(std::move(t));
        }
    }
    /// A clear forgets them.
    void forget(std::string_view key) {
        std::lock_guard l(m_);
        if (const auto it = kept_.find(key); it != kept_.end()) kept_.erase(it);
    }
    [[nodiscard]] std::size_t size() const {
        std::lock_guard l(m_);
        return kept_.size();
    }

private:
    struct string_hash {  // looked up by view
        using is_transparent = void;
        std::size_t operator()(std::string_view s) const noexcept { return session_hash(s); }
    };
    struct kept {
        std::vector<tool> tools;
        std::uint64_t generation = 0;
    };
    std::size_t max_;
    mutable std::mutex m_;
    std::unordered_map<std::string, kept, string_hash, std::equal_to<>> kept_;
    std::deque<std::pair<std::string, std::uint64_t>> order_;  // (key, generation), oldest first
    std::uint64_t generation_ = 0;
};

} // namespace ania::detail
