// examples/scripted_model.hpp -- a SCRIPTED stand-in for an LLM: no network, replies from fixed rules.
// It models ania::chat_client so that the examples run anywhere; a real agent plugs in an OpenAI-compatible
// client instead, and nothing else changes.
#pragma once

#include <span>
#include <string_view>
#include <string>

#include <ania/concepts.hpp>
#include <ania/message.hpp>
#include <ania/text/utf8.hpp>

namespace example {

/// Rules: a compression request gets a summary; "我喜欢…" calls `memory_save`; a question about the past
/// ("还记得") calls `memory_search`, then answers from the tool result; anything else is acknowledged. Usage is reported as
/// a server would: prompt tokens = the size of the whole request (estimated here as characters / 2).
class scripted_model {
public:
    ania::completion complete(const ania::chat_request& req) {
        const ania::message_sequence& request = req.messages;
        std::int64_t prompt = 0;
        for (const auto& m : request) prompt += 4 + static_cast<std::int64_t>(ania::text::rune_count(m.text())) / 2;
        const ania::usage used{prompt, 16, prompt + 16, {}};
        const ania::message& last = request.back();
        const std::string text = last.text();
        if (request.front().role == ania::role::system && request.front().text().find("保留关键信息") != std::string::npos)
            // the compressor's request: its prompt as the system message, the transcript as the user message
            return ania::completion::success(
                ania::message::assistant("<think>整理一下</think>小明喜欢美式咖啡（不加糖）；大家在讨论周末去爬山。"), used);
        if (last.role == ania::role::user && text.find("还记得") != std::string::npos)
            return ania::completion::success(
                ania::message::assistant_calls({{"call_" + std::to_string(++calls_), "function", "memory_search",
                                                 R"({"query":"咖啡"})", {}, {}}}),
                used);
        if (last.role == ania::role::user && text.find("我喜欢") != std::string::npos)
            return ania::completion::success(
                ania::message::assistant_calls({{"call_" + std::to_string(++calls_), "function", "memory_save",
                                                 R"({"content":"小明喜欢美式咖啡，不加糖","user_id":"qq:1","tags":["偏好"]})", {}, {}}}),
                used);
        if (last.role == ania::role::tool) {
            const bool found = last.text().rfind("找到", 0) == 0;  // memory_search found something
            return ania::completion::success(
                ania::message::assistant(found ? "记得！你喜欢美式咖啡，不加糖。" : "记下了。"), used);
        }
        // Acknowledge what the user wrote (the part after any block spliced in before it for this request).
        const std::size_t own = text.rfind("\n\n");
        const std::string_view said = own == std::string::npos ? std::string_view(text) : std::string_view(text).substr(own + 2);
        return ania::completion::success(
            ania::message::assistant("好的，收到：" + std::string(ania::text::truncate_runes(said, 24))), used);
    }

private:
    int calls_ = 0;
};

static_assert(ania::chat_client<scripted_model>);

} // namespace example
