// ania/memory/tools.hpp -- memory_save / memory_search / memory_update / memory_forget, bound to one scope.
// SPDX-License-Identifier: MIT
#pragma once

#include <cstddef>
#include <cstdint>
#include <exception>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <ania/detail/linkage.hpp>
#include <ania/memory/options.hpp>
#include <ania/memory/scope.hpp>
#include <ania/tool.hpp>

namespace ania::memory {

/// The texts the model reads. `{id}`, `{content}`, `{similar}`, `{max}`, `{n}`, `{error}` are replaced.
struct tool_replies {
    std::string saved = "已保存记忆 [{id}]：{content}";
    std::string saved_similar = "已保存记忆 [{id}]，但它与已有记忆相似：{similar}。请用 memory_update 把它们合并为一条，"
                                "再用 memory_forget 删除多余的条目。";
    std::string duplicate = "已有相同的记忆 [{id}]：{content}（未重复保存）。";
    std::string empty = "错误：记忆内容为空。";
    std::string full = "错误：记忆已满（上限 {max} 条）。请先用 memory_forget 清理过时的记忆，或用 memory_update 合并相似的记忆，然后再保存。";
    std::string failed = "错误：操作失败：{error}";
    std::string found = "找到 {n} 条记忆：";
    std::string none = "没有找到相关记忆。";
    std::string updated = "已更新记忆 [{id}]：{content}";
    std::string not_found = "错误：找不到记忆 [{id}]。";
    std::string forgotten = "已删除记忆 [{id}]。";
    std::string bad_arguments = "错误：参数无效：{error}";
    std::string tags_label = "标签";
    std::string user_label = "用户";
    // Tool descriptions (what the model is told each tool does).
    std::string save_description = "保存一条长期记忆（称呼、偏好、重要信息等）。内容相同的记忆不会重复保存；与已有记忆相似时会提示合并。";
    std::string search_description = "检索长期记忆。不带 query 时返回全部（新的在前）；带 query 时返回所有相关的记忆，按关键词相关度排序。limit 可限制条数。";
    std::string update_description = "按 ID 更新一条记忆。未提供的字段保持不变；user_id 或 tags 传空值则清空。";
    std::string forget_description = "按 ID 删除一条记忆。";
};

/// The English set.
[[nodiscard]] inline tool_replies english_tool_replies() {
    tool_replies r;
    r.saved = "Saved memory [{id}]: {content}";
    r.saved_similar = "Saved memory [{id}], but it is similar to existing memories: {similar}. Merge them into one with "
                      "memory_update, then delete the extra entries with memory_forget.";
    r.duplicate = "An identical memory already exists [{id}]: {content} (not saved again).";
    r.empty = "Error: the memory content is empty.";
    r.full = "Error: memory is full ({max} entries). Clean up outdated memories with memory_forget, or merge similar ones "
             "with memory_update, before saving.";
    r.failed = "Error: the operation failed: {error}";
    r.found = "Found {n} memories:";
    r.none = "No matching memories.";
    r.updated = "Updated memory [{id}]: {content}";
    r.not_found = "Error: memory [{id}] not found.";
    r.forgotten = "Deleted memory [{id}].";
    r.bad_arguments = "Error: invalid arguments: {error}";
    r.tags_label = "tags";
    r.user_label = "user";
    r.save_description = "Save a long-term memory (names, preferences, important facts). Identical content is not saved "
                         "twice; similar content is saved and reported so that you can merge.";
    r.search_description = "Search long-term memory. Without query: everything, newest first; with query: every relevant "
                           "memory by keyword relevance. limit caps the count.";
    r.update_description = "Update a memory by ID. Fields not given are kept; an empty user_id or tags clears it.";
    r.forget_description = "Delete a memory by ID.";
    return r;
}

namespace detail {

/// What the memory tools call on a manager, type-erased (a pointer and one function per operation).
struct memory_ops {
    void* self;
    bool (*enabled)(void* self);
    std::size_t (*max_entries)(void* self);
    save_result (*save)(void* self, const scope& s, std::string_view content, std::string_view user_id,
                        std::vector<std::string> tags);
    std::vector<search_hit> (*search)(void* self, const scope& s, std::string_view query, std::size_t limit);
    update_result (*update)(void* self, const scope& s, std::string_view id, std::optional<std::string_view> content,
                            std::optional<std::string_view> user_id, std::optional<std::vector<std::string>> tags);
    forget_result (*forget)(void* self, const scope& s, std::string_view id);

    template <class Manager>
    [[nodiscard]] static memory_ops of(Manager& m) noexcept {
        return {&m,
                [](void* p) -> bool { return static_cast<Manager*>(p)->enabled(); },
                [](void* p) -> std::size_t { return static_cast<Manager*>(p)->options().max_entries; },
                [](void* p, const scope& s, std::string_view content, std::string_view user_id, std::vector<std::string> tags) {
                    return static_cast<Manager*>(p)->save(s, content, user_id, std::move(tags));
                },
                [](void* p, const scope& s, std::string_view query, std::size_t limit) {
                    return static_cast<Manager*>(p)->search(s, query, limit);
                },
                [](void* p, const scope& s, std::string_view id, std::optional<std::string_view> content,
                   std::optional<std::string_view> user_id, std::optional<std::vector<std::string>> tags) {
                    return static_cast<Manager*>(p)->update(s, id, content, user_id, std::move(tags));
                },
                [](void* p, const scope& s, std::string_view id) { return static_cast<Manager*>(p)->forget(s, id); }};
    }
};

/// The four tools over `ops` (make_tools' work). A template over the one type memory_ops only so that a
/// header-only file that makes no tools does not compile them; compiled mode's library instantiates it.
template <class Ops = memory_ops>
[[nodiscard]] std::vector<tool> make_memory_tools(Ops ops, const scope& s, tool_replies replies);

} // namespace detail

/// The four memory tools, bound to `s` when they are made: the model names no scope and cannot reach another
/// one, not even with an id guessed from elsewhere (ids are looked up inside `s` only). Empty when memory is
/// disabled (SPEC §4: no tools are registered then). `manager` must outlive the tools.
/// (A thin template: the tools are made by detail::make_memory_tools over a type-erased view of the
/// manager, so that the JSON work is written once, and compiled once in compiled mode, for every manager.)
template <class Manager>
[[nodiscard]] std::vector<tool> make_tools(Manager& manager, const scope& s, tool_replies replies = {}) {
    return detail::make_memory_tools(detail::memory_ops::of(manager), s, std::move(replies));
}

} // namespace ania::memory

#if ANIA_HEADER_ONLY
#include <ania/memory/tools-inl.hpp>
#endif
