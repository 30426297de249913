// examples/quickstart.cpp -- a group-chat conversation persisted in an embedded SQLite file, with the
// token-budget window compressing it when it grows past its budget.
//
// Run it twice: the second run starts from the history the first one stored (a "restart").
// The model is SCRIPTED (examples/scripted_model.hpp); everything else is the real library.
#include <cstdio>
#include <string>
#include <vector>

#include <ania/ania.hpp>
#include <ania/memory/sqlite_backend.hpp>
#include <ania/store/sqlite_store.hpp>

#include "scripted_model.hpp"

namespace {

void show(const char* tag, const ania::message& m) {
    std::string line = ania::dump(m);
    if (ania::text::rune_count(line) > 100) line = std::string(ania::text::truncate_runes(line, 100)) + "…";
    std::printf("  %-9s %s\n", tag, line.c_str());
}

} // namespace

int main(int argc, char** argv) {
    const std::string db_path = argc > 1 ? argv[1] : "quickstart.db";
    const std::string session = "g:100001";

    // The spec's defaults, overridden from JSON (a typo is an error that names the key). A tiny budget here,
    // so that compression happens within a few turns.
    const ania::config cfg = ania::parse_config(R"({"max_context_tokens": 150, "session": {"max_sessions": 64}})");

    // The policies: a window counting tokens by character class; an LLM summary that falls back to dropping
    // the oldest half when the model fails; SQLite rows for the history.
    ania::token_window<ania::char_class_counter> window(ania::from_config<ania::window_options>(cfg));
    ania::default_compressor<example::scripted_model> compressor{example::scripted_model{}};
    ania::sqlite_store store(db_path);  // WAL, synchronous=FULL, quick_check at open
    if (!store.enabled()) std::printf("persistence disabled (see the log line above): in-memory only\n");
    ania::background_writer<ania::sqlite_store> writer(store);  // a /stop cannot lose a turn

    // Long-term memory in the same file, and its four tools bound to this group's scope.
    ania::memory::sqlite_backend memories(db_path);
    ania::memory::sqlite_manager memory(memories, ania::from_config<ania::memory::manager_options>(cfg));
    const std::vector<ania::tool> tools = ania::memory::make_tools(memory, ania::memory::scope::from(session));
    const auto run_tool = [&](const ania::tool_call& call) {
        for (const ania::tool& t : tools)
            if (t.name == call.name) return t.handler(call.arguments);
        return std::string("错误：未知工具 ") + call.name;
    };

    // Restart: load what an earlier run stored (through the writer: it sees queued writes), repaired so that
    // the API accepts it. No request has measured it yet: the first maybe_compress decides on the estimate.
    window.assign(ania::load_history(writer, session));
    std::printf("loaded %zu messages and %zu memories from %s; compression above %lld tokens\n", window.size(),
                memory.size(ania::memory::scope::from(session)), db_path.c_str(), static_cast<long long>(window.threshold()));

    example::scripted_model model;
    const ania::message system = ania::message::system("你是 Ania，一个群聊机器人。回答要简洁。");
    const std::vector<std::string> user_turns = {
        "[nickname:小明 id:qq:1] 我喜欢美式咖啡，不加糖。",
        "[nickname:阿花 id:qq:2] 这周末有人去爬山吗？我们打算早上八点在地铁站集合，带好水和午饭。",
        "[nickname:小明 id:qq:1] 我去！顺便问一下山上有没有信号，我想直播一会儿。",
        "[nickname:小明 id:qq:1] 你还记得我喜欢什么咖啡吗？",
    };
    for (const std::string& text : user_turns) {
        ania::turn_stats stats;
        // Before the round: compress if the last request's context passed ratio x max_context_tokens.
        const auto c = ania::maybe_compress(window, compressor, writer, session, stats);  // replace() via the writer
        if (c.status == ania::compress_status::compressed)
            std::printf("  [compress] %zu messages -> %zu, spent %lld tokens\n", c.before, c.after,
                        static_cast<long long>(c.used.total_tokens.value_or(0)));
        if (c.status == ania::compress_status::compressed && !window.empty()) show("summary", window[0]);

        std::vector<ania::message> request = {system};
        request.insert(request.end(), window.messages().begin(), window.messages().end());
        const std::size_t turn_start = request.size();
        // memory.auto_inject: relevant memories go into this request only (SPEC §2), never into history.
        const std::string memories_block = ania::memory::inject_block(memory, ania::memory::scope::from(session), text);
        request.push_back(ania::message::user(memories_block.empty() ? text : memories_block + "\n\n" + text));
        if (!memories_block.empty()) std::printf("  [inject]  %zu runes of memories, for this request only\n",
                                                 ania::text::rune_count(memories_block));
        show("user", ania::message::user(text));
        while (true) {  // the tool loop: call the model until it answers with text
            ania::completion reply = model.complete(ania::chat_request{std::span<const ania::message>(request)});
            stats.record_call(reply.used);
            request.push_back(std::move(reply.reply));
            show("assistant", request.back());
            if (!request.back().has_tool_calls()) break;
            const std::vector<ania::tool_call> calls = request.back().tool_calls;
            for (const ania::tool_call& call : calls) {
                request.push_back(ania::message::tool_result(call.id, run_tool(call)));
                show("tool", request.back());
            }
        }
        // The turn (the suffix from its user message: user, tool chain, reply) with the original user text:
        // one copy for the window (images kept), one for the store (images as markers), persisted in the
        // background.
        ania::turn_copies turn = ania::make_turn_copies(request, turn_start, text);
        writer.append(session, std::move(turn.stored));
        window.append(std::move(turn.window));
        window.record_request(stats);  // the last call's prompt tokens, not the sum over the tool rounds
        std::printf("  [stats]   %s\n", ania::to_json(stats).dump().c_str());
    }

    // A turn cut off after the model asked for a tool (an error, a /stop) leaves an unanswered call: an
    // OpenAI-compatible API rejects such a transcript with HTTP 400, forever once it is stored. Repair answers it.
    std::vector<ania::message> cut(window.messages().begin(), window.messages().end());
    cut.push_back(ania::message::user("查一下天气"));
    cut.push_back(ania::message::assistant_calls({{"call_cut", "function", "weather", R"({"city":"上海"})", {}, {}}}));
    for (const auto& issue : ania::validate_transcript(cut))
        std::printf("validator: %s at message %zu (%s)\n", std::string(ania::to_string(issue.problem)).c_str(), issue.index,
                    issue.tool_call_id.c_str());
    ania::repair_transcript(cut);
    show("repaired", cut.back());

    writer.flush();
    std::printf("%s holds %zu messages and %zu memories for %s; run again to continue the conversation\n",
                db_path.c_str(), store.load(session).size(), memory.size(ania::memory::scope::from(session)), session.c_str());
    return 0;
}
