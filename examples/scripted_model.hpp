// examples/scripted_model.hpp -- a SCRIPTED stand-in for an LLM: no network, replies from a fixed script.
// It exists so that the examples run anywhere; a real agent uses an OpenAI-compatible client instead.
#pragma once

#include <string>
#include <vector>

#include <ania/message.hpp>
#include <ania/usage.hpp>

namespace example {

/// What one (scripted) LLM call returns: the assistant message and the usage a server would report.
struct scripted_reply {
    ania::message reply;
    ania::usage used;
};

/// Answers a user turn: a question about the past first calls `memory_search`, then answers; anything else
/// is answered directly. Prompt tokens are reported as a server would (the size of the whole request).
class scripted_model {
public:
    scripted_reply complete(const std::vector<ania::message>& request) {
        const ania::message& last = request.back();
        std::int64_t prompt = 0;
        for (const auto& m : request) prompt += 4 + static_cast<std::int64_t>(ania::text::rune_count(m.text())) / 2;
        ania::usage u{prompt, 12, prompt + 12, {}};
        if (last.role == ania::role::user && last.text().find("还记得") != std::string::npos) {
            const std::string id = "call_" + std::to_string(++calls_);
            return {ania::message::assistant_calls({{id, "function", "memory_search", R"({"query":"咖啡"})", {}, {}}}), u};
        }
        if (last.role == ania::role::tool) return {ania::message::assistant("记得！你喜欢美式咖啡，不加糖。"), u};
        return {ania::message::assistant("好的，收到：" + std::string(ania::text::truncate_runes(last.text(), 20))), u};
    }

private:
    int calls_ = 0;
};

} // namespace example
