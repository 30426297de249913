// tests/support/bot_rules.hpp -- what the bot's cases (bot_cases.hpp) are made of: a SCRIPTED model's rules
// (no LLM here), a log capture, the bot's options.
#pragma once
#include <catch2/catch.hpp>

#include <atomic>
#include <chrono>
#include <fstream>
#include <mutex>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include <ania/ania.hpp>
#include <ania/bot/bot.hpp>
#include <ania/json.hpp>
#include <ania/testing/scripted_client.hpp>

#include "temp_dir.hpp"


namespace ania_test::bot {

using ania::message;
using ania::role;
using ania::testing::scripted_client;
using namespace std::chrono_literals;

/// The user's own words in a request's last user message (injections come before a blank line).
inline std::string said(const message& m) {
    const std::string t = m.text();
    const std::size_t at = t.rfind("\n\n");
    return at == std::string::npos ? t : t.substr(at + 2);
}

/// SCRIPTED rules, safe from any thread: "记住 X" saves X through memory_save, "查 X" searches for it, "回忆 X"
/// searches the archive (history_search), a tool
/// result is answered with its text, "几条" counts the user messages the model was sent; anything else is
/// acknowledged. Each request is counted by the model named in it (main or compression).
struct rules {
    std::shared_ptr<std::atomic<int>> ids = std::make_shared<std::atomic<int>>(0);

    ania::completion operator()(const ania::chat_request& req) const {
        const std::vector<message> msgs = req.messages.to_vector();
        const message& last = msgs.back();
        if (last.role == role::tool) return ania::completion::success(message::assistant("工具说：" + last.text()), {30, 5, 35, {}});
        const std::string s = said(last);
        const auto call = [&](const char* name, const std::string& args) {
            std::vector<ania::tool_call> cs{{"call_" + std::to_string(++*ids), "function", name, args, {}, {}}};
            return ania::completion::success(message::assistant_calls(std::move(cs)), {30, 5, 35, {}});
        };
        if (s.rfind("记住 ", 0) == 0) return call("memory_save", ania::json{{"content", s.substr(7)}}.dump());
        if (s.rfind("查 ", 0) == 0) return call("memory_search", ania::json{{"query", s.substr(4)}}.dump());
        if (s.rfind("回忆 ", 0) == 0) return call("history_search", ania::json{{"query", s.substr(7)}}.dump());
        if (s == "几条") {
            std::size_t users = 0;
            for (const message& m : msgs) users += m.role == role::user;
            return ania::completion::success(message::assistant(std::to_string(users)), {30, 5, 35, {}});
        }
        return ania::completion::success(message::assistant("收到：" + s), {30, 5, 35, {}});
    }
};

/// A bot of `Store` over the scripted model, with a manual clock (idle eviction without waiting).
template <class Store>
struct scripted_bot_traits : ania::bot_traits<scripted_client, Store> {
    using clock = ania::manual_clock;
};

struct capture {
    std::shared_ptr<std::mutex> mu = std::make_shared<std::mutex>();
    std::shared_ptr<std::vector<std::string>> lines = std::make_shared<std::vector<std::string>>();
    ania::log_sink sink() const {
        return [mu = mu, lines = lines](ania::log_level, std::string_view t) {
            std::lock_guard l(*mu);
            lines->emplace_back(t);
        };
    }
    std::size_t count(std::string_view needle) const {
        std::lock_guard l(*mu);
        std::size_t n = 0;
        for (const auto& s : *lines) n += s.find(needle) != std::string::npos;
        return n;
    }
};

/// The options of every case: the prompt, the test's log, no janitor thread (the cases tick by hand), and the
/// database `Db::place` names (a file of the test's directory, or the throwaway PostgreSQL cluster's database).
template <class Db>
ania::bot_options bot_options_in(const ania_test::temp_dir& dir, const capture& log) {
    ania::bot_options o;
    o.system_prompt = "你是 Ania。";
    o.log = log.sink();
    o.adjust_sessions = [](ania::session_options& s) { s.janitor = false; };
    Db::place(o, dir);
    return o;
}

inline scripted_client rule_model() {
    scripted_client m;
    m.otherwise(ania::testing::scripted_client::respond_fn(rules{}));
    return m;
}

} // namespace ania_test::bot

