// ania/testing/scripted_client.hpp -- a SCRIPTED chat_client for tests: no LLM, no network. It replays
// queued replies (or failures, or exceptions), then answers by a rule of yours, and records every request.
// SPDX-License-Identifier: MIT
//
//     ania::testing::scripted_client model;
//     model.reply("你好！").calls({{"memory_search", R"({"query":"咖啡"})"}}).otherwise("ok");
//     ania::agent<ania::testing::scripted_client> a(writer, {.client = model}, {.session = "f:1"});
//
// Thread-safe: copies share one script under a lock (like a client handle shares its connection), so a bot
// of many sessions can run on it from many threads. Read requests() once the threads are done.
#pragma once

#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <stdexcept>
#include <string>
#include <variant>
#include <vector>

#include <ania/concepts.hpp>
#include <ania/message.hpp>

namespace ania::testing {

struct scripted_throw {
    std::string what;
};

/// Copies share one script (like a real client handle shares its connection).
class scripted_client {
public:
    using respond_fn = std::function<ania::completion(const ania::chat_request&)>;
    using step = std::variant<ania::completion, scripted_throw, respond_fn>;

    scripted_client() : state_(std::make_shared<state>()) {}

    scripted_client& reply(std::string text, ania::usage u = {100, 20, 120, {}}) {
        const std::lock_guard lock(state_->mutex);
        state_->script.emplace_back(ania::completion::success(ania::message::assistant(std::move(text)), u));
        return *this;
    }
    /// A reply that calls tools: (name, arguments) pairs, ids call_<n> counted over the script.
    scripted_client& calls(std::vector<std::pair<std::string, std::string>> cs, ania::usage u = {100, 20, 120, {}}) {
        const std::lock_guard lock(state_->mutex);
        std::vector<ania::tool_call> out;
        for (auto& [name, args] : cs)
            out.push_back({"call_" + std::to_string(++state_->ids), "function", std::move(name), std::move(args), {}, {}});
        state_->script.emplace_back(ania::completion::success(ania::message::assistant_calls(std::move(out)), u));
        return *this;
    }
    scripted_client& message(ania::message m, ania::usage u = {100, 20, 120, {}}) {
        const std::lock_guard lock(state_->mutex);
        state_->script.emplace_back(ania::completion::success(std::move(m), u));
        return *this;
    }
    /// A step computed from the request it gets (e.g. to block until a test releases it).
    scripted_client& respond(respond_fn f) {
        const std::lock_guard lock(state_->mutex);
        state_->script.emplace_back(std::move(f));
        return *this;
    }
    scripted_client& fail(std::string why, ania::usage u = {}) {
        const std::lock_guard lock(state_->mutex);
        state_->script.emplace_back(ania::completion::failure(std::move(why), u));
        return *this;
    }
    scripted_client& throws(std::string what) {
        const std::lock_guard lock(state_->mutex);
        state_->script.emplace_back(scripted_throw{std::move(what)});
        return *this;
    }
    /// When the script is exhausted: reply with this text forever (empty = fail).
    scripted_client& otherwise(std::string text) {
        const std::lock_guard lock(state_->mutex);
        state_->fallback = std::move(text);
        return *this;
    }
    /// When the script is exhausted: answer every request by `rule` (called outside the lock: it may block).
    scripted_client& otherwise(respond_fn rule) {
        const std::lock_guard lock(state_->mutex);
        state_->rule = std::move(rule);
        return *this;
    }

    ania::completion complete(const ania::chat_request& request) {
        std::unique_lock lock(state_->mutex);
        state_->requests.push_back(request.messages.to_vector());
        state_->tools.push_back(request.tools.size());
        if (state_->script.empty()) {
            if (state_->rule) {
                const respond_fn rule = state_->rule;
                lock.unlock();
                return rule(request);
            }
            if (state_->fallback.empty()) return ania::completion::failure("scripted_client: script exhausted");
            return ania::completion::success(ania::message::assistant(state_->fallback), {50, 10, 60, {}});
        }
        step s = std::move(state_->script.front());
        state_->script.pop_front();
        lock.unlock();
        if (auto* t = std::get_if<scripted_throw>(&s)) throw std::runtime_error(t->what);
        if (auto* f = std::get_if<respond_fn>(&s)) return (*f)(request);
        return std::get<ania::completion>(std::move(s));
    }

    [[nodiscard]] const std::vector<std::vector<ania::message>>& requests() const { return state_->requests; }
    [[nodiscard]] std::size_t calls() const {
        const std::lock_guard lock(state_->mutex);
        return state_->requests.size();
    }
    [[nodiscard]] std::size_t remaining() const {
        const std::lock_guard lock(state_->mutex);
        return state_->script.size();
    }
    [[nodiscard]] const std::vector<std::size_t>& tools_offered() const { return state_->tools; }

private:
    struct state {
        mutable std::mutex mutex;
        std::deque<step> script;
        std::string fallback;
        respond_fn rule;
        std::vector<std::vector<ania::message>> requests;
        std::vector<std::size_t> tools;  // tools offered with each request
        int ids = 0;
    };
    std::shared_ptr<state> state_;
};

static_assert(ania::chat_client<scripted_client>);

} // namespace ania::testing
