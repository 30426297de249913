// examples/quickstart.cpp -- a group-chat bot: an agent type composed from policies, its history and long-term
// memory in one embedded SQLite file, memory tools the model calls, compression when the context grows.
//
// Run it twice: the second run replays the history the first one stored (a "restart").
// The model is SCRIPTED (examples/scripted_model.hpp) unless ANIA_BASE_URL, ANIA_API_KEY and ANIA_MODEL name
// an OpenAI-compatible endpoint (DeepSeek, OpenAI, a local vLLM/llama.cpp server): then it is that model, over
// ania::openai::client. Everything else is the real library either way.
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include <ania/ania.hpp>
#include <ania/json.hpp>  // to_json(stats), dump(message): the JSON API
#include <ania/memory/sqlite_backend.hpp>
#include <ania/store/sqlite_store.hpp>

#ifdef ANIA_EXAMPLE_OPENAI
#include <variant>

#include <ania/openai/client.hpp>
#endif

#include "scripted_model.hpp"

namespace example {

#ifdef ANIA_EXAMPLE_OPENAI
/// The model this run talks to: a real endpoint when the environment names one, else the scripted rules.
/// (A bot with one model names its client type directly: `using client = ania::openai::client;`.)
class model {
public:
    model() {
        const char* url = std::getenv("ANIA_BASE_URL");
        const char* key = std::getenv("ANIA_API_KEY");
        const char* name = std::getenv("ANIA_MODEL");
        if (url && key && name && *url && *name)
            impl_.emplace<ania::openai::client>(ania::openai::client_options{.base_url = url, .api_key = key, .model = name});
    }
    ania::completion complete(const ania::chat_request& r) {
        return std::visit([&](auto& c) { return c.complete(r); }, impl_);
    }
    [[nodiscard]] bool scripted() const noexcept { return impl_.index() == 0; }

private:
    std::variant<scripted_model, ania::openai::client> impl_;
};
#else
struct model : scripted_model {
    [[nodiscard]] bool scripted() const noexcept { return true; }
};
#endif

} // namespace example

// The agent type: the spec's defaults, with SQLite rows for the history, the model, and typed events so that
// this example can print what the window does.
struct bot_traits : ania::default_agent_traits {
    using store = ania::sqlite_store;
    using client = example::model;
    using events = ania::event_functions;
};
using group_bot = ania::basic_agent<bot_traits>;
// The same type in the named-slot form, policies in any order:
static_assert(std::is_same_v<group_bot::store_type,
                             ania::agent_of<ania::slot::events<ania::event_functions>, ania::slot::client<example::model>,
                                            ania::slot::store<ania::sqlite_store>>::store_type>);

namespace {

void show(const char* tag, const ania::message& m) {
    std::string line = ania::dump(m);
    if (ania::text::rune_count(line) > 100) line = std::string(ania::text::truncate_runes(line, 100)) + "…";
    std::printf("  %-9s %s\n", tag, line.c_str());
}

void print_compression(const ania::compression_event& e) {
    const char* why = e.why == ania::compression_event::trigger::usage ? "reported usage" : "estimate";
    if (e.status == ania::compress_status::failed) {
        std::printf("  [compress] failed, history kept: %.*s\n", static_cast<int>(e.error.size()), e.error.data());
        return;
    }
    std::printf("  [compress] %s: %lld tokens > threshold; %zu messages -> %zu (%s), spent %lld tokens\n", why,
                static_cast<long long>(e.tokens_before), e.messages_before, e.messages_after,
                e.fell_back ? "summary failed, oldest half dropped" : "summarised", static_cast<long long>(e.used.total_tokens.value_or(0)));
    if (e.fell_back) std::printf("  [fallback] %.*s\n", static_cast<int>(e.error.size()), e.error.data());
}

} // namespace

int main(int argc, char** argv) {
    const std::string db_path = argc > 1 ? argv[1] : "quickstart.db";
    const std::string session = "g:100001";
    const example::model model;
    if (model.scripted()) {
        std::printf("model: SCRIPTED (examples/scripted_model.hpp), no network; set ANIA_BASE_URL, ANIA_API_KEY and "
                    "ANIA_MODEL for a real one\n");
    } else {
        std::printf("model: %s at %s\n", std::getenv("ANIA_MODEL"), std::getenv("ANIA_BASE_URL"));
    }

    // The spec's defaults, overridden from JSON (a typo is an error that names the key). A tiny budget here
    // (the base prompt and the four memory tools' schemas take ~540 of it), so that compression happens within
    // a few turns; relevant memories injected into each request.
    const ania::config cfg = ania::parse_config(R"({"max_context_tokens": 900, "memory": {"auto_inject": true}})");

    ania::sqlite_store store(db_path);  // WAL, synchronous=FULL, quick_check at open
    if (!store.enabled()) std::printf("persistence disabled (see the log line above): in-memory only\n");
    ania::background_writer<ania::sqlite_store> writer(store);  // one writer thread for every session: a /stop cannot lose a turn

    // Long-term memory in the same file; its four tools bound to this group's scope.
    ania::memory::sqlite_backend memories(db_path);
    ania::memory::sqlite_manager memory(memories, ania::from_config<ania::memory::manager_options>(cfg));
    const auto group = ania::memory::scope::from(session);

    ania::agent_options opt = ania::from_config<ania::agent_options>(cfg);
    opt.system_prompt = "你是 Ania，一个群聊机器人。回答要简洁。";
    if (cfg.memory.auto_inject)  // SPEC §2: for this request only, never into the window or the store
        opt.auto_inject = [&](std::string_view, std::string_view text) {
            std::string block = ania::memory::inject_block(memory, group, text);
            if (!block.empty()) std::printf("  [inject]  %zu runes of memories, for this request only\n", ania::text::rune_count(block));
            return block;
        };

    ania::hook_set hooks;
    hooks.on_pre_compact([](const ania::pre_compact_event& e) {
        std::printf("  [PreCompact] %zu messages, context %lld > %lld\n", e.messages, static_cast<long long>(e.context_tokens),
                    static_cast<long long>(e.threshold));
    });
    group_bot bot(writer,
                  {.client = model,
                   .tools = ania::tool_registry(ania::memory::make_tools(memory, group)),
                   .hooks = std::move(hooks),
                   .events = {.compression = print_compression}},
                  session, std::move(opt));

    // Restart: the first use loads what an earlier run stored (through the writer, repaired). No request has
    // measured it yet: the first turn's compression check decides on the estimate.
    std::printf("loaded %zu messages and %zu memories from %s; compression above %lld tokens\n", bot.window().size(),
                memory.size(group), db_path.c_str(), static_cast<long long>(bot.window().threshold()));

    const std::vector<std::string> user_turns = {
        "[nickname:小明 id:qq:1] 我喜欢美式咖啡，不加糖。",
        "[nickname:阿花 id:qq:2] 这周末有人去爬山吗？我们打算早上八点在地铁站集合，带好水和午饭。",
        "[nickname:小明 id:qq:1] 我去！顺便问一下山上有没有信号，我想直播一会儿。",
        "[nickname:小明 id:qq:1] 我喜欢喝美式咖啡，不要加糖。",
        "[nickname:阿花 id:qq:2] 那就说定了，下雨就改成去看电影，大家记得带伞。",
        "[nickname:小明 id:qq:1] 你还记得我喜欢什么咖啡吗？",
    };
    for (const std::string& text : user_turns) {
        std::printf("user: %s\n", text.c_str());
        const ania::chat_result r = bot.chat(text);
        for (std::size_t i = 1; i < r.messages.size(); ++i)  // the turn as kept: the user message, then the model's
            show(r.messages[i].role == ania::role::tool ? "tool" : "assistant", r.messages[i]);
        if (!r.ok()) std::printf("  [error]   %s: %s\n", std::string(ania::to_string(r.end)).c_str(), r.error.c_str());
        std::printf("  [stats]   %s\n", ania::to_json(r.stats).dump().c_str());
    }

    writer.flush();
    std::printf("%s holds %zu messages and %zu memories for %s; run again to continue the conversation\n",
                db_path.c_str(), store.load(session).size(), memory.size(group), session.c_str());
    return 0;
}
