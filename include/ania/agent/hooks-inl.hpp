// ania/agent/hooks-inl.hpp -- the definitions of <ania/agent/hooks.hpp>.
// Header-only mode includes this from there; compiled mode compiles it once, in the library (see
// <ania/detail/linkage.hpp>).
// SPDX-License-Identifier: MIT
#pragma once

#include <ania/detail/linkage.hpp>
#if !ANIA_HEADER_ONLY && !defined(ANIA_BUILDING_LIBRARY)
static_assert(false, "compiled mode: the library defines what <ania/agent/hooks-inl.hpp> defines; include <ania/agent/hooks.hpp>");
#endif

#include <ania/agent/hooks.hpp>

namespace ania {

ANIA_INLINE auto hook_set::on_session_start(std::function<std::string(const session_start_event&)> f) -> hook_set& { return add(&lists::session_start, std::move(f)); }
ANIA_INLINE auto hook_set::on_user_prompt_submit(std::function<prompt_decision(const user_prompt_event&)> f) -> hook_set& { return add(&lists::prompt, std::move(f)); }
ANIA_INLINE auto hook_set::on_pre_tool_use(std::function<tool_decision(const tool_use_event&)> f) -> hook_set& { return add(&lists::pre_tool, std::move(f)); }
ANIA_INLINE auto hook_set::on_post_tool_use(std::function<void(const tool_result_event&)> f) -> hook_set& { return add(&lists::post_tool, std::move(f)); }
ANIA_INLINE auto hook_set::on_stop(std::function<void(const stop_event&)> f) -> hook_set& { return add(&lists::stop, std::move(f)); }
ANIA_INLINE auto hook_set::on_pre_compact(std::function<void(const pre_compact_event&)> f) -> hook_set& { return add(&lists::pre_compact, std::move(f)); }

ANIA_INLINE hook_set::hook_set(const hook_set& o)
    : l_(o.l_ ? std::make_unique<lists>(*o.l_) : nullptr) {}

ANIA_INLINE auto hook_set::operator=(const hook_set& o) -> hook_set& {
    if (this != &o) l_ = o.l_ ? std::make_unique<lists>(*o.l_) : nullptr;
    return *this;
}

ANIA_INLINE auto hook_set::session_start(const session_start_event& e) -> std::string {
    std::string out;
    if (!l_) return out;
    guard g;
    for (const auto& f : l_->session_start) g.run([&] { join(out, f(e)); });
    g.rethrow();
    return out;
}

ANIA_INLINE auto hook_set::user_prompt_submit(const user_prompt_event& e) -> prompt_decision {
    prompt_decision d;
    if (!l_) return d;
    guard g;
    for (const auto& f : l_->prompt) {
        bool blocked = false;
        g.run([&] {
            prompt_decision one = f(e);
            if (one.block) {
                d = std::move(one);
                blocked = true;
            } else {
                join(d.context, std::move(one.context));
            }
        });
        if (blocked) return d;
    }
    g.rethrow();
    return d;
}

ANIA_INLINE auto hook_set::pre_tool_use(const tool_use_event& e) -> tool_decision {
    if (!l_) return {};
    guard g;
    for (const auto& f : l_->pre_tool) {
        tool_decision d;
        g.run([&] { d = f(e); });
        if (d.block) return d;
    }
    g.rethrow();
    return {};
}

ANIA_INLINE auto hook_set::join(std::string& out, std::string more) -> void {
    if (more.empty()) return;
    if (!out.empty()) out += "\n\n";
    out += more;
}

} // namespace ania
