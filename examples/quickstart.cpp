// examples/quickstart.cpp -- a conversation persisted in an embedded SQLite file.
//
// Run it twice: the second run starts from the history the first one stored (a "restart").
// The model is SCRIPTED (examples/scripted_model.hpp): everything else is the real library.
#include <cstdio>
#include <string>
#include <vector>

#include <ania/ania.hpp>
#include <ania/store/sqlite_store.hpp>

#include "scripted_model.hpp"

namespace {

void show(const char* tag, const ania::message& m) {
    std::string line = ania::dump(m);
    if (ania::text::rune_count(line) > 110) line = std::string(ania::text::truncate_runes(line, 110)) + "…";
    std::printf("  %-8s %s\n", tag, line.c_str());
}

} // namespace

int main(int argc, char** argv) {
    const std::string db_path = argc > 1 ? argv[1] : "quickstart.db";
    const std::string session = "g:100001";

    // Configuration: the spec's defaults, overridden from JSON; a typo would be an error naming the key.
    const ania::config cfg = ania::parse_config(R"({"max_context_tokens": 32000, "session": {"max_sessions": 64}})");
    std::printf("config: compress above %.0f of %lld tokens, %lld sessions max\n",
                cfg.compress_ratio * static_cast<double>(cfg.max_context_tokens),
                static_cast<long long>(cfg.max_context_tokens), static_cast<long long>(cfg.session.max_sessions));

    ania::sqlite_store store(db_path);  // WAL, synchronous=FULL, quick_check at open
    if (!store.enabled()) std::printf("persistence disabled (see the log line above): in-memory only\n");

    // Load what an earlier run stored; the repair pass makes any stored transcript acceptable to the API.
    std::vector<ania::message> history = store.load(session);
    const auto repaired = ania::repair_transcript(history);
    std::printf("loaded %zu messages from %s%s\n", history.size(), db_path.c_str(),
                repaired.changed() ? " (repaired)" : "");

    example::scripted_model model;
    ania::turn_stats stats;
    const std::vector<std::string> user_turns = {"[nickname:小明 id:qq:1] 我喜欢美式咖啡，不加糖。",
                                                 "[nickname:小明 id:qq:1] 你还记得我喜欢什么咖啡吗？"};
    for (const std::string& text : user_turns) {
        std::vector<ania::message> request = {ania::message::system("你是 Ania，一个群聊机器人。")};
        request.insert(request.end(), history.begin(), history.end());
        const std::size_t turn_start = request.size();
        request.push_back(ania::message::user(text));
        show("user", request.back());
        // The tool loop: call the model until it answers with text.
        while (true) {
            auto [reply, used] = model.complete(request);
            stats.record_call(used);
            request.push_back(std::move(reply));
            show("model", request.back());
            if (!request.back().has_tool_calls()) break;
            for (const ania::tool_call& call : request.back().tool_calls) {
                request.push_back(ania::message::tool_result(call.id, R"({"hits":["小明喜欢美式咖啡，不加糖"]})"));
                show("tool", request.back());
            }
        }
        // Persist the turn: the suffix from its user message (user, tool chain, reply), appended.
        const std::span<const ania::message> turn(request.begin() + static_cast<std::ptrdiff_t>(turn_start), request.end());
        store.append(session, turn);
        history.insert(history.end(), turn.begin(), turn.end());
    }
    std::printf("stats: %s\n", ania::to_json(stats).dump().c_str());

    // A turn cut off after the model asked for a tool (an error, a /stop) leaves an unanswered call:
    // an OpenAI-compatible API rejects that transcript with HTTP 400 forever after. The repair answers it.
    std::vector<ania::message> cut = history;
    cut.push_back(ania::message::user("查一下天气"));
    cut.push_back(ania::message::assistant_calls({{"call_cut", "function", "weather", R"({"city":"上海"})", {}, {}}}));
    for (const auto& issue : ania::validate_transcript(cut))
        std::printf("validator: %s at message %zu (%s)\n", std::string(ania::to_string(issue.problem)).c_str(), issue.index,
                    issue.tool_call_id.c_str());
    ania::repair_transcript(cut);
    show("repair", cut.back());

    std::printf("%s now holds %zu messages for %s; run again to continue the conversation\n", db_path.c_str(),
                store.load(session).size(), session.c_str());
    return 0;
}
