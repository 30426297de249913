// ania/memory/tools-inl.hpp -- the definitions of <ania/memory/tools.hpp>: the four tools and the argument
// reading they need. Header-only mode includes this from there; compiled mode compiles it once, in the
// library (see <ania/detail/linkage.hpp>).
// SPDX-License-Identifier: MIT
#pragma once

#include <ania/detail/linkage.hpp>
#if !ANIA_HEADER_ONLY && !defined(ANIA_BUILDING_LIBRARY)
static_assert(false, "compiled mode: the library defines what <ania/memory/tools-inl.hpp> defines; include <ania/memory/tools.hpp>");
#endif

#include <cstdint>
#include <exception>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <ania/json.hpp>
#include <ania/memory/provenance.hpp>
#include <ania/memory/tools.hpp>

namespace ania::memory {

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

template <class Ops>
std::vector<tool> detail::make_memory_tools(Ops ops, const scope& s, tool_replies replies) {
    std::vector<tool> tools;
    if (!ops.enabled(ops.self)) return tools;
    auto shared = std::make_shared<const tool_replies>(std::move(replies));
    // Each change the model makes is recorded as the model's, in this scope's session, by its tool call.
    const auto guard = [shared, session = s.str()](auto&& body) {
        return [shared, body, session](std::string_view args) -> std::string {
            const tool_call* call = current_tool_call();
            const acting_as who({"model", session, call ? call->id : std::string()});
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
                     guard([ops, s, shared](const json& a) {
                         const auto content = detail::opt_string(a, "content");
                         if (!content) throw detail::bad_arguments("content is required");
                         const auto user = detail::opt_string(a, "user_id");
                         auto t = detail::opt_tags(a);
                         const save_result r = ops.save(ops.self, s, *content, user.value_or(""), t.value_or(std::vector<std::string>{}));
                         switch (r.status) {
                         case save_status::saved: return detail::fill(shared->saved, {{"id", r.saved.id}, {"content", r.saved.content}});
                         case save_status::saved_near_duplicate: {
                             std::string similar;
                             for (const auto& x : r.similar) similar += (similar.empty() ? "" : "、") + ("[" + x.id + "]");
                             return detail::fill(shared->saved_similar, {{"id", r.saved.id}, {"similar", similar}});
                         }
                         case save_status::exact_duplicate: return detail::fill(shared->duplicate, {{"id", r.saved.id}, {"content", r.saved.content}});
                         case save_status::empty: return shared->empty;
                         case save_status::full: return detail::fill(shared->full, {{"max", std::to_string(ops.max_entries(ops.self))}});
                         default: return detail::fill(shared->failed, {{"error", r.error.empty() ? "memory disabled" : r.error}});
                         }
                     })});
    tools.push_back({"memory_search", shared->search_description,
                     detail::schema({{"query", str}, {"limit", json{{"type", "integer"}, {"minimum", 1}}}}, {}),
                     guard([ops, s, shared, describe](const json& a) {
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
                         const auto hits = ops.search(ops.self, s, query.value_or(""), limit);
                         if (hits.empty()) return shared->none;
                         std::string out = detail::fill(shared->found, {{"n", std::to_string(hits.size())}});
                         for (const auto& h : hits) out += "\n" + describe(h.item);
                         return out;
                     })});
    tools.push_back({"memory_update", shared->update_description,
                     detail::schema({{"id", str}, {"content", str}, {"user_id", str}, {"tags", tags}}, {"id"}),
                     guard([ops, s, shared](const json& a) {
                         const auto id = detail::opt_string(a, "id");
                         if (!id) throw detail::bad_arguments("id is required");
                         const auto content = detail::opt_string(a, "content");
                         const auto user = detail::opt_string(a, "user_id");
                         auto t = detail::opt_tags(a);
                         std::optional<std::string_view> cv, uv;
                         if (content) cv = *content;
                         if (user) uv = *user;
                         const update_result r = ops.update(ops.self, s, *id, cv, uv, std::move(t));
                         switch (r.status) {
                         case update_status::updated: return detail::fill(shared->updated, {{"id", r.updated.id}, {"content", r.updated.content}});
                         case update_status::not_found: return detail::fill(shared->not_found, {{"id", text::quote_for_message(*id)}});
                         case update_status::empty: return shared->empty;
                         default: return detail::fill(shared->failed, {{"error", r.error.empty() ? "memory disabled" : r.error}});
                         }
                     })});
    tools.push_back({"memory_forget", shared->forget_description, detail::schema({{"id", str}}, {"id"}),
                     guard([ops, s, shared](const json& a) {
                         const auto id = detail::opt_string(a, "id");
                         if (!id) throw detail::bad_arguments("id is required");
                         const forget_result r = ops.forget(ops.self, s, *id);
                         switch (r.status) {
                         case forget_status::forgotten: return detail::fill(shared->forgotten, {{"id", text::quote_for_message(*id)}});
                         case forget_status::not_found: return detail::fill(shared->not_found, {{"id", text::quote_for_message(*id)}});
                         default: return detail::fill(shared->failed, {{"error", r.error.empty() ? "memory disabled" : r.error}});
                         }
                     })});
    return tools;
}

} // namespace ania::memory
