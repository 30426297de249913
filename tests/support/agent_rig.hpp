// tests/support/agent_rig.hpp -- what the agent tests share: a basic_agent over a SCRIPTED client (no LLM
// here) with captured log lines and events, on a memory store and its writer.
#pragma once

#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include <ania/ania.hpp>

#include "scripted_client.hpp"

namespace ania_test {

/// Log lines into a shared vector (the default writes to stderr).
struct capture_log {
    std::shared_ptr<std::vector<std::string>> lines = std::make_shared<std::vector<std::string>>();
    void operator()(ania::log_level, std::string_view text) const { lines->emplace_back(text); }
};

/// Every event, as text, for the tests that look at them.
struct recorded_events {
    std::shared_ptr<std::vector<ania::compression_event>> compressions = std::make_shared<std::vector<ania::compression_event>>();
    std::shared_ptr<std::vector<ania::repair_event>> repairs = std::make_shared<std::vector<ania::repair_event>>();
    std::shared_ptr<std::vector<std::string>> persistence = std::make_shared<std::vector<std::string>>();
    std::shared_ptr<std::vector<ania::fixed_context_event>> fixed = std::make_shared<std::vector<ania::fixed_context_event>>();
    void operator()(const ania::compression_event& e) const { compressions->push_back(e); }
    void operator()(const ania::fixed_context_event& e) const { fixed->push_back(e); }
    void operator()(const ania::repair_event& e) const { repairs->push_back(e); }
    void operator()(const ania::persistence_event& e) const { persistence->emplace_back(e.error); }
};

struct test_traits : ania::default_agent_traits {
    using client = scripted_client;
    using log = capture_log;
    using events = recorded_events;
};
using test_agent = ania::basic_agent<test_traits>;

/// A store, its writer, the scripted model and the agent's parts.
struct rig {
    ania::ram_store store;
    ania::background_writer<ania::ram_store> writer{store};
    scripted_client model;
    capture_log log;
    recorded_events events;
    ania::hook_set hooks;
    std::vector<ania::tool> tools;  // the static tools of the agent

    test_agent make(ania::agent_options opt = {}, std::string session = "g:1") {
        return test_agent(writer, {.client = model, .tools = ania::tool_registry(tools), .hooks = hooks, .events = events, .log = log},
                          std::move(session), std::move(opt));
    }
    std::vector<ania::message> stored(std::string_view session = "g:1") {
        writer.flush();
        return store.load(session);
    }
};

} // namespace ania_test
