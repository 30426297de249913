// ania/agent/tool_registry-inl.hpp -- the definitions of <ania/agent/tool_registry.hpp>.
// Header-only mode includes this from there; compiled mode compiles it once, in the library (see
// <ania/detail/linkage.hpp>).
// SPDX-License-Identifier: MIT
#pragma once

#include <ania/detail/linkage.hpp>
#if !ANIA_HEADER_ONLY && !defined(ANIA_BUILDING_LIBRARY)
static_assert(false, "compiled mode: the library defines what <ania/agent/tool_registry-inl.hpp> defines; include <ania/agent/tool_registry.hpp>");
#endif

#include <ania/agent/tool_registry.hpp>

namespace ania {

ANIA_INLINE std::string fill_tool_text(std::string_view pattern, std::string_view name, std::string_view why) {
    std::string out(pattern);
    for (const auto& [key, value] : {std::pair<std::string_view, std::string_view>{"{name}", name}, {"{why}", why}})
        if (const auto at = out.find(key); at != std::string::npos) out.replace(at, key.size(), value);
    return out;
}

ANIA_INLINE tool_registry::tool_registry(std::vector<tool> static_tools)
    : static_(std::make_shared<const std::vector<tool>>(std::move(static_tools))) {
    rebuild();
}

ANIA_INLINE tool_registry::tool_registry(std::shared_ptr<const std::vector<tool>> static_tools)
    : static_(std::move(static_tools)) { rebuild(); }

ANIA_INLINE auto tool_registry::add(tool t) -> void {
    for (tool& mine : own_)
        if (mine.name == t.name) {
            mine = std::move(t);
            rebuild();
            return;
        }
    own_.push_back(std::move(t));
    rebuild();
}

ANIA_INLINE auto tool_registry::remove(std::string_view name) -> bool {
    for (auto it = own_.begin(); it != own_.end(); ++it)
        if (it->name == name) {
            own_.erase(it);
            rebuild();
            return true;
        }
    return false;
}

ANIA_INLINE auto tool_registry::find(std::string_view name) const noexcept -> const tool* {
    for (const tool& t : all_)
        if (t.name == name) return &t;
    return nullptr;
}

ANIA_INLINE auto tool_registry::run(const tool_call& call, const tool_texts& texts) const -> tool_output {
    const tool* t = find(call.name);
    if (t == nullptr || (!t->handler && !t->image_handler)) return {fill_tool_text(texts.unknown_tool, call.name), {}};
    std::string_view args = call.arguments;
    if (text::trim(args).empty()) args = "{}";
    if (std::string problem = detail::tool_arguments_problem(args); !problem.empty())
        return {fill_tool_text(texts.bad_arguments, call.name, problem), {}};
    struct running {  // current_tool_call() for the handler; the outer one back after it
        const tool_call* outer = detail::current_call_slot();
        explicit running(const tool_call& c) noexcept { detail::current_call_slot() = &c; }
        ~running() { detail::current_call_slot() = outer; }
    } in_call(call);
    try {
        if (t->image_handler) return t->image_handler(args);
        return {t->handler(args), {}};
    } catch (const std::exception& e) {
        return {fill_tool_text(texts.tool_failed, call.name, e.what()), {}};
    } catch (...) {
        return {fill_tool_text(texts.tool_failed, call.name, "unknown exception"), {}};
    }
}

ANIA_INLINE auto tool_registry::rebuild() -> void {
    all_.clear();
    if (static_)
        for (const tool& t : *static_) {
            bool shadowed = false;
            for (const tool& mine : own_) shadowed = shadowed || mine.name == t.name;
            if (!shadowed) all_.push_back(t);
        }
    all_.insert(all_.end(), own_.begin(), own_.end());
}

} // namespace ania
