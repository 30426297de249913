// ania/agent/tool_registry.hpp -- the tools an agent offers the model, and running one call safely.
// SPDX-License-Identifier: MIT
#pragma once

#include <cstddef>
#include <exception>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <ania/detail/linkage.hpp>
#include <ania/error.hpp>
#include <ania/message.hpp>
#include <ania/text/shared_text.hpp>
#include <ania/text/utf8.hpp>
#include <ania/tool.hpp>

namespace ania {

/// The texts the model reads when a call cannot run normally. The defaults are Chinese, as the rest of the
/// original's tool replies (memory/tools.hpp); `{name}` and `{why}` are filled in.
struct tool_texts {
    shared_text unknown_tool = shared_text::literal("错误：未知工具 {name}");
    shared_text bad_arguments = shared_text::literal("错误：工具 {name} 的参数不是合法的 JSON 对象（{why}），请修正后重试。");
    shared_text tool_failed = shared_text::literal("错误：工具 {name} 执行失败：{why}");
    shared_text too_many_calls = shared_text::literal("错误：一次回复中的工具调用过多，此调用未执行。");
};

[[nodiscard]] ANIA_INLINE std::string fill_tool_text(std::string_view pattern, std::string_view name,
                                                     std::string_view why = {});

/// The tools of one agent: the static ones it was built with (one list shared between the sessions of a bot)
/// and those added to this session at run time (they shadow a static tool of the same
/// name). `run` never throws: an unknown tool, arguments that are not a JSON object and a handler that throws
/// are each answered with a text the model can act on. Not thread-safe: one agent, one thread.
class tool_registry {
public:
    tool_registry() = default;
    explicit tool_registry(std::vector<tool> static_tools);
    explicit tool_registry(std::shared_ptr<const std::vector<tool>> static_tools);

    /// Adds (or replaces, by name) a tool of this session.
    void add(tool t);
    /// Removes a tool of this session; returns whether there was one. Static tools stay.
    bool remove(std::string_view name);

    /// The tools added to this session at run time, in the order they were added.
    [[nodiscard]] std::span<const tool> session_tools() const noexcept { return own_; }
    /// What the request offers, in order: static tools first (minus the shadowed), then this session's.
    [[nodiscard]] std::span<const tool> tools() const noexcept { return all_; }
    [[nodiscard]] const tool* find(std::string_view name) const noexcept;

    /// Runs one call. Empty arguments count as `{}` (models send "" for tools without parameters).
    [[nodiscard]] tool_output run(const tool_call& call, const tool_texts& texts = {}) const;

private:
    void rebuild();

    std::shared_ptr<const std::vector<tool>> static_;
    std::vector<tool> own_;
    std::vector<tool> all_;  // what a request offers: rebuilt when tools change, so a call costs no copy
};

} // namespace ania

#if ANIA_HEADER_ONLY
#include <ania/agent/tool_registry-inl.hpp>
#endif
