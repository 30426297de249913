// ania/memory/tools.hpp -- memory_save / memory_search / memory_update / memory_forget, bound to one scope.
// SPDX-License-Identifier: MIT
#pragma once

#include <cstdint>
#include <exception>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <ania/json.hpp>
#include <ania/memory/manager.hpp>
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

inline std::string fill(std::string pattern, std::initializer_list<std::pair<std::string_view, std::string>> values) {
    for (const auto& [key, value] : values) {
        const std::string token = "{" + std::string(key) + "}";
        for (std::size_t at = pattern.find(token); at != std::string::npos; at = pattern.find(token, at + value.size()))
            pattern.replace(at, token.size(), value);
    }
    return pattern;
}

struct bad_arguments : std::exception {
    std::string what_;
    explicit bad_arguments(std::string w) : what_(std::move(w)) {}
    const char* what() const noexcept override { return what_.c_str(); }
};

inline json parse_arguments(std::string_view args) {
    if (text::trim(args).empty()) return json::object();  // some models send "" for no arguments
    json j;
    try {
        j = parse_json(args);
    } catch (const std::exception& e) {
        throw bad_arguments(std::string("not valid JSON (") + e.what() + ")");
    }
    if (!j.is_object()) throw bad_arguments("expected a JSON object");
    return j;
}

inline std::optional<std::string> opt_string(const json& j, const char* key) {
    const auto it = j.find(key);
    if (it == j.end() || it->is_null()) return std::nullopt;
    if (!it->is_string()) throw bad_arguments(std::string(key) + " must be a string");
    return it->get<std::string>();
}

inline std::optional<std::vector<std::string>> opt_tags(const json& j) {
    const auto it = j.find("tags");
    if (it == j.end() || it->is_null()) return std::nullopt;
    if (!it->is_array()) throw bad_arguments("tags must be an array of strings");
    std::vector<std::string> tags;
    for (const json& t : *it) {
        if (!t.is_string()) throw bad_arguments("tags must be an array of strings");
        tags.push_back(t.get<std::string>());
    }
    return tags;
}

inline json schema(std::initializer_list<std::pair<const char*, json>> props, std::initializer_list<const char*> required) {
    json p = json::object();
    for (const auto& [k, v] : props) p[k] = v;
    json r = json::array();
    for (const char* k : required) r.push_back(k);
    return json{{"type", "object"}, {"properties", p}, {"required", r}};
}

} // namespace detail

/// The four memory tools, bound to `s` when they are made: the model names no scope and cannot reach another
/// one, not even with an id guessed from elsewhere (ids are looked up inside `s` only). Empty when memory is
/// disabled (SPEC §4: no tools are registered then). `manager` must outlive the tools.
template <class Manager>
[[nodiscard]] std::vector<tool> make_tools(Manager& manager, const scope& s, tool_replies replies = {}) {
    std::vector<tool> tools;
    if (!manager.enabled()) return tools;
    auto shared = std::make_shared<const tool_replies>(std::move(replies));
    const auto guard = [shared](auto&& body) {
        return [shared, body](std::string_view args) -> std::string {
            try {
                return body(detail::parse_arguments(args));
            } catch (const detail::bad_arguments& e) {  // the texts may quote the arguments: keep them readable
                return detail::fill(shared->bad_arguments, {{"error", text::quote_for_message(e.what(), 200)}});
            } catch (const std::exception& e) {
                return detail::fill(shared->failed, {{"error", text::quote_for_message(e.what(), 200)}});
            }
        };
    };
    const auto describe = [shared](const entry& e) {
        std::string line = "[" + e.id + "] " + e.content;
        std::string extra;
        if (!e.tags.empty()) {
            extra += shared->tags_label + ": ";
            for (std::size_t i = 0; i < e.tags.size(); ++i) extra += (i ? ", " : "") + e.tags[i];
        }
        if (!e.user_id.empty()) extra += (extra.empty() ? "" : "; ") + shared->user_label + ": " + e.user_id;
        return extra.empty() ? line : line + " (" + extra + ")";
    };
    const json str = json{{"type", "string"}};
    const json tags = json{{"type", "array"}, {"items", {{"type", "string"}}}};

    tools.push_back({"memory_save", shared->save_description,
                     detail::schema({{"content", str}, {"user_id", str}, {"tags", tags}}, {"content"}),
                     guard([&manager, s, shared](const json& a) {
                         const auto content = detail::opt_string(a, "content");
                         if (!content) throw detail::bad_arguments("content is required");
                         const auto user = detail::opt_string(a, "user_id");
                         auto t = detail::opt_tags(a);
                         const save_result r = manager.save(s, *content, user.value_or(""), t.value_or(std::vector<std::string>{}));
                         switch (r.status) {
                         case save_status::saved: return detail::fill(shared->saved, {{"id", r.saved.id}, {"content", r.saved.content}});
                         case save_status::saved_near_duplicate: {
                             std::string similar;
                             for (const auto& x : r.similar) similar += (similar.empty() ? "" : "、") + ("[" + x.id + "]");
                             return detail::fill(shared->saved_similar, {{"id", r.saved.id}, {"similar", similar}});
                         }
                         case save_status::exact_duplicate: return detail::fill(shared->duplicate, {{"id", r.saved.id}, {"content", r.saved.content}});
                         case save_status::empty: return shared->empty;
                         case save_status::full: return detail::fill(shared->full, {{"max", std::to_string(manager.options().max_entries)}});
                         default: return detail::fill(shared->failed, {{"error", r.error.empty() ? "memory disabled" : r.error}});
                         }
                     })});
    tools.push_back({"memory_search", shared->search_description,
                     detail::schema({{"query", str}, {"limit", json{{"type", "integer"}, {"minimum", 1}}}}, {}),
                     guard([&manager, s, shared, describe](const json& a) {
                         const auto query = detail::opt_string(a, "query");
                         std::size_t limit = 0;  // SPEC §4: every entry (no query) or every hit (query)
                         if (const auto it = a.find("limit"); it != a.end() && !it->is_null()) {
                             if (it->is_number_unsigned()) {  // any size: more than the scope holds is all of it
                                 const auto n = it->get<std::uint64_t>();
                                 if (n == 0) throw detail::bad_arguments("limit must be a positive integer");
                                 limit = n > SIZE_MAX ? SIZE_MAX : static_cast<std::size_t>(n);
                             } else if (it->is_number_integer() && it->get<std::int64_t>() >= 1) {
                                 limit = static_cast<std::size_t>(it->get<std::int64_t>());
                             } else {
                                 throw detail::bad_arguments("limit must be a positive integer");
                             }
                         }
                         const auto hits = manager.search(s, query.value_or(""), limit);
                         if (hits.empty()) return shared->none;
                         std::string out = detail::fill(shared->found, {{"n", std::to_string(hits.size())}});
                         for (const auto& h : hits) out += "\n" + describe(h.item);
                         return out;
                     })});
    tools.push_back({"memory_update", shared->update_description,
                     detail::schema({{"id", str}, {"content", str}, {"user_id", str}, {"tags", tags}}, {"id"}),
                     guard([&manager, s, shared](const json& a) {
                         const auto id = detail::opt_string(a, "id");
                         if (!id) throw detail::bad_arguments("id is required");
                         const auto content = detail::opt_string(a, "content");
                         const auto user = detail::opt_string(a, "user_id");
                         auto t = detail::opt_tags(a);
                         std::optional<std::string_view> cv, uv;
                         if (content) cv = *content;
                         if (user) uv = *user;
                         const update_result r = manager.update(s, *id, cv, uv, std::move(t));
                         switch (r.status) {
                         case update_status::updated: return detail::fill(shared->updated, {{"id", r.updated.id}, {"content", r.updated.content}});
                         case update_status::not_found: return detail::fill(shared->not_found, {{"id", text::quote_for_message(*id)}});
                         case update_status::empty: return shared->empty;
                         default: return detail::fill(shared->failed, {{"error", r.error.empty() ? "memory disabled" : r.error}});
                         }
                     })});
    tools.push_back({"memory_forget", shared->forget_description, detail::schema({{"id", str}}, {"id"}),
                     guard([&manager, s, shared](const json& a) {
                         const auto id = detail::opt_string(a, "id");
                         if (!id) throw detail::bad_arguments("id is required");
                         const forget_result r = manager.forget(s, *id);
                         switch (r.status) {
                         case forget_status::forgotten: return detail::fill(shared->forgotten, {{"id", text::quote_for_message(*id)}});
                         case forget_status::not_found: return detail::fill(shared->not_found, {{"id", text::quote_for_message(*id)}});
                         default: return detail::fill(shared->failed, {{"error", r.error.empty() ? "memory disabled" : r.error}});
                         }
                     })});
    return tools;
}

} // namespace ania::memory
