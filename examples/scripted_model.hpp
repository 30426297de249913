// examples/scripted_model.hpp -- a SCRIPTED stand-in for an LLM: no network, replies from fixed rules.
// It models ania::chat_client so that the examples run anywhere; a real agent plugs in an OpenAI-compatible
// client instead, and nothing else changes.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

#include <ania/concepts.hpp>
#include <ania/context/token_counter.hpp>
#include <ania/message.hpp>
#include <ania/text/utf8.hpp>
#include <ania/tool.hpp>

namespace example {

/// Rules: a compression request gets a summary, except every second one, which fails as an outage would
/// (so the fallback truncation shows); "我喜欢…" calls `memory_save`; a question about the past ("还记得")
/// calls `memory_search`, then answers from the tool result; anything else is acknowledged. Usage is reported
/// as a server would: prompt tokens = the size of the whole request, tool schemas included (counted here with
/// ania's own estimate, so that the example's tiny budget behaves the same every run).
/// Copies share their counters (a client handle shares its connection).
class scripted_model {
public:
    ania::completion complete(const ania::chat_request& req) {
        const ania::message_sequence& request = req.messages;
        const ania::char_class_counter count;
        std::int64_t prompt = 0;
        for (const auto& m : request) prompt += count.count(m);
        if (!req.tools.empty()) prompt += count.count(ania::message::system(ania::definitions_text(req.tools)));
        const ania::usage used{prompt, 16, prompt + 16, {}};
        if (request.front().role == ania::role::system && request.front().text().find("保留关键信息") != std::string::npos) {
            // the compressor's request: its prompt as the system message, the transcript as the user message
            if (++state_->summaries % 2 == 0) return ania::completion::failure("scripted outage: the compression model is unavailable", used);
            return ania::completion::success(
                ania::message::assistant("<think>整理一下</think>小明喜欢美式咖啡（不加糖）；大家在讨论周末去爬山。"), used);
        }
        const ania::message& last = request.back();
        if (last.role == ania::role::tool) {
            const std::string r = last.text();
            const char* answer = r.rfind("找到", 0) == 0              ? "记得！你喜欢美式咖啡，不加糖。"
                                 : r.find("相似") != std::string::npos ? "记下了，不过我之前记过类似的，回头合并一下。"
                                 : r.rfind("已有相同", 0) == 0          ? "这个我已经记得了。"
                                                                        : "记下了。";
            return ania::completion::success(ania::message::assistant(answer), used);
        }
        // What the user wrote: the part after any block spliced in before it for this request.
        const std::string text = last.text();
        const std::size_t own = text.rfind("\n\n");
        const std::string_view said = own == std::string::npos ? std::string_view(text) : std::string_view(text).substr(own + 2);
        const std::string_view who = nickname(said);
        if (said.find("还记得") != std::string_view::npos)
            return ania::completion::success(ania::message::assistant_calls({call("memory_search", R"({"query":"咖啡"})")}), used);
        if (const auto at = said.find("我喜欢"); at != std::string_view::npos) {
            const std::string fact = std::string(who) + std::string(said.substr(at + std::string_view("我").size()));
            return ania::completion::success(
                ania::message::assistant_calls({call("memory_save", R"({"content":")" + fact + R"(","user_id":"qq:1","tags":["偏好"]})")}),
                used);
        }
        return ania::completion::success(
            ania::message::assistant("好的，收到：" + std::string(ania::text::truncate_runes(said.substr(said.find(']') + 1), 24))), used);
    }

private:
    static std::string_view nickname(std::string_view said) {
        const auto b = said.find("nickname:"), e = said.find(' ', b);
        return b == std::string_view::npos || e == std::string_view::npos ? std::string_view("用户") : said.substr(b + 9, e - b - 9);
    }
    ania::tool_call call(std::string name, std::string args) {
        return {"call_" + std::to_string(++state_->calls), "function", std::move(name), std::move(args), {}, {}};
    }
    struct state {
        int calls = 0, summaries = 0;
    };
    std::shared_ptr<state> state_ = std::make_shared<state>();
};

static_assert(ania::chat_client<scripted_model>);

} // namespace example
