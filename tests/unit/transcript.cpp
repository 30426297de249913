// tests/unit/transcript.cpp -- the validator reports what an OpenAI-compatible API rejects; the repair fixes
// exactly that, keeps tool groups together, leaves everything else alone and is idempotent.
#include <catch2/catch.hpp>

#include <random>
#include <string>
#include <vector>

#include <ania/json.hpp>
#include <ania/transcript.hpp>

using ania::message;
using ania::transcript_problem;

namespace {

ania::tool_call call(std::string id) { return {std::move(id), "function", "fn", "{}", {}, {}}; }
message calls(std::initializer_list<const char*> ids) {
    std::vector<ania::tool_call> cs;
    for (const char* id : ids) cs.push_back(call(id));
    return message::assistant_calls(std::move(cs));
}
message result(const char* id) { return message::tool_result(id, std::string("result of ") + id); }

std::vector<transcript_problem> problems(const std::vector<message>& ms) {
    std::vector<transcript_problem> out;
    for (const auto& i : ania::validate_transcript(ms)) out.push_back(i.problem);
    return out;
}

} // namespace

TEST_CASE("valid transcripts pass", "[transcript]") {
    CHECK(ania::is_valid_transcript(std::vector<message>{}));
    const std::vector<message> ok = {message::system("s"), message::user("u"), calls({"a", "b"}), result("b"),
                                     result("a"), message::assistant("done"), message::user("again")};
    CHECK(ania::validate_transcript(ok).empty());
    CHECK(ania::is_valid_transcript(ok));
}

TEST_CASE("each rejected structure is reported with its index and id", "[transcript]") {
    using P = transcript_problem;
    SECTION("orphan result at the start, as a cut leaves it") {
        const std::vector<message> t = {result("a"), message::user("u")};
        const auto issues = ania::validate_transcript(t);
        REQUIRE(issues.size() == 1);
        CHECK(issues[0] == ania::transcript_issue{P::orphan_result, 0, "a"});
    }
    SECTION("unanswered calls, as a cancelled turn leaves them") {
        const std::vector<message> t = {message::user("u"), calls({"a", "b"}), result("a")};
        const auto issues = ania::validate_transcript(t);
        REQUIRE(issues.size() == 1);
        CHECK(issues[0] == ania::transcript_issue{P::unanswered_call, 1, "b"});
    }
    SECTION("a result for an unknown id") {
        CHECK(problems({calls({"a"}), result("a"), result("zzz")}) == std::vector<P>{P::unknown_result});
    }
    SECTION("a duplicate result") {
        CHECK(problems({calls({"a"}), result("a"), result("a")}) == std::vector<P>{P::duplicate_result});
    }
    SECTION("a result separated from its call by a user message") {
        CHECK(problems({calls({"a"}), message::user("u"), result("a")}) == std::vector<P>{P::unanswered_call, P::orphan_result});
    }
    SECTION("duplicate call ids") {
        CHECK(problems({calls({"a", "a"}), result("a")}) == std::vector<P>{P::duplicate_call_id});
    }
}

TEST_CASE("repair drops orphans and answers unanswered calls with [cancelled]", "[transcript]") {
    std::vector<message> t = {result("x"), message::user("u"), calls({"a", "b", "c"}), result("c"), result("a"),
                              result("q"), message::user("next")};
    const auto report = ania::repair_transcript(t);
    CHECK(report.results_dropped == 2);
    CHECK(report.results_added == 1);
    REQUIRE(t.size() == 6);
    CHECK(t[0] == message::user("u"));
    CHECK(t[1].tool_calls.size() == 3);
    CHECK(t[2] == result("c"));  // kept results in their order, then the cancelled ones
    CHECK(t[3] == result("a"));
    CHECK(t[4] == message::tool_result("b", "[cancelled]"));
    CHECK(t[5] == message::user("next"));
    CHECK(ania::is_valid_transcript(t));
}

TEST_CASE("repair can drop unanswered calls instead", "[transcript]") {
    ania::repair_options opt;
    opt.unanswered = ania::unanswered_call_policy::drop_calls;
    SECTION("a partly answered group keeps its answered calls") {
        std::vector<message> t = {calls({"a", "b"}), result("a")};
        const auto r = ania::repair_transcript(t, opt);
        CHECK(r.calls_dropped == 1);
        REQUIRE(t.size() == 2);
        REQUIRE(t[0].tool_calls.size() == 1);
        CHECK(t[0].tool_calls[0].id == "a");
    }
    SECTION("an assistant message left empty is removed; one with text stays") {
        message with_text = calls({"b"});
        with_text.form = ania::content_form::text;
        with_text.content = "let me check";
        std::vector<message> t = {message::user("u"), calls({"a"}), message::user("v"), with_text};
        const auto r = ania::repair_transcript(t, opt);
        CHECK(r.messages_dropped == 1);
        REQUIRE(t.size() == 3);
        CHECK(t[2].content == "let me check");
        CHECK_FALSE(t[2].has_tool_calls());
    }
}

TEST_CASE("a valid transcript is not touched at all", "[transcript]") {
    std::vector<message> t = {message::user("u"), calls({"a"}), result("a")};
    const message* before = t.data();
    CHECK_FALSE(ania::repair_transcript(t).changed());
    CHECK(t.data() == before);  // not even reallocated
}

namespace {

/// Random transcripts with all the shapes that break: k-call groups, partial and shuffled answers, orphans,
/// duplicates, unknown ids and interleaved user messages.
std::vector<message> random_transcript(std::mt19937& rng) {
    std::uniform_int_distribution<int> len(0, 25), kind(0, 9), k(1, 4), pct(0, 99);
    std::vector<message> t;
    int next_id = 0;
    for (int i = len(rng); i > 0; --i) {
        const int what = kind(rng);
        if (what <= 2) {
            t.push_back(message::user("u" + std::to_string(i)));
        } else if (what <= 3) {
            t.push_back(message::assistant("a" + std::to_string(i)));
        } else if (what <= 4) {
            t.push_back(message::tool_result("orphan" + std::to_string(next_id++), "o"));
        } else {
            std::vector<ania::tool_call> cs;
            std::vector<std::string> ids;
            for (int c = k(rng); c > 0; --c) {
                ids.push_back("id" + std::to_string(next_id++));
                if (pct(rng) < 3 && !ids.empty()) ids.back() = ids.front();  // duplicate id
                cs.push_back(call(ids.back()));
            }
            message m = message::assistant_calls(std::move(cs));
            if (pct(rng) < 30) { m.form = ania::content_form::text; m.content = "thinking aloud"; }
            t.push_back(std::move(m));
            std::shuffle(ids.begin(), ids.end(), rng);
            for (const auto& id : ids) {
                const int fate = pct(rng);
                if (fate < 70) t.push_back(message::tool_result(id, "r"));
                else if (fate < 75) { t.push_back(message::tool_result(id, "r")); t.push_back(message::tool_result(id, "dup")); }
                else if (fate < 80) t.push_back(message::tool_result("unknown" + id, "r"));
                // else: unanswered
            }
        }
    }
    return t;
}

} // namespace

TEST_CASE("repair property: valid afterwards, idempotent, valid parts untouched", "[transcript][property]") {
    std::mt19937 rng(424242);
    for (const auto policy : {ania::unanswered_call_policy::add_cancelled, ania::unanswered_call_policy::drop_calls}) {
        ania::repair_options opt;
        opt.unanswered = policy;
        for (int round = 0; round < 3000; ++round) {
            const std::vector<message> original = random_transcript(rng);
            std::vector<message> t = original;
            const auto report = ania::repair_transcript(t, opt);
            INFO("round " << round);
            REQUIRE(ania::validate_transcript(t).empty());
            CHECK(report.changed() == !ania::is_valid_transcript(original));
            std::vector<message> again = t;
            CHECK_FALSE(ania::repair_transcript(again, opt).changed());
            CHECK(again == t);
            // Every non-tool, non-calling message survives, unchanged and in order.
            std::vector<message> plain_before, plain_after;
            for (const auto& m : original) if (m.role == ania::role::user) plain_before.push_back(m);
            for (const auto& m : t) if (m.role == ania::role::user) plain_after.push_back(m);
            CHECK(plain_before == plain_after);
            // Every kept result comes from the original and keeps its content.
            for (const auto& m : t)
                if (m.is_tool_result() && m.content != "[cancelled]") {
                    bool found = false;
                    for (const auto& o : original) found = found || o == m;
                    CHECK(found);
                }
        }
    }
}

TEST_CASE("ids that are not valid UTF-8 are repaired before matching: repair is idempotent, dump/parse agrees", "[transcript][bad-input]") {
    // Built in code (parsing repairs them already): two distinct invalid ids that become one on the wire.
    const std::string a = "call_\xFF", b = "call_\xFE";
    std::vector<message> t = {message::user("u"), message::assistant_calls({call(a), call(b), call("ok")}),
                              message::tool_result(a, "ra")};
    CHECK_FALSE(ania::is_valid_transcript(t));
    CHECK(problems(t).front() == transcript_problem::invalid_id);
    ania::repair_transcript(t);
    CHECK(ania::is_valid_transcript(t));
    // Both ids are "call_\uFFFD" now: one call keeps it (with a's result), the duplicate is gone, "ok" is
    // answered as cancelled.
    REQUIRE(t[1].tool_calls.size() == 2);
    CHECK(t[1].tool_calls[0].id == "call_\xEF\xBF\xBD");
    CHECK(t[2] == message::tool_result("call_\xEF\xBF\xBD", "ra"));
    CHECK(t[3] == message::tool_result("ok", "[cancelled]"));
    std::vector<message> again = t;
    CHECK_FALSE(ania::repair_transcript(again).changed());  // idempotent
    CHECK(again == t);
    std::vector<message> wire;
    for (const auto& m : t) wire.push_back(ania::parse_message(ania::dump(m)));
    CHECK(wire == t);  // what the API will see is what was validated
    CHECK(ania::is_valid_transcript(wire));
    // An unanswered call with an invalid id: its [cancelled] result matches it after the round trip.
    std::vector<message> cut = {message::user("u"), message::assistant_calls({call("x\xC0")})};
    ania::repair_transcript(cut);
    REQUIRE(cut.size() == 3);
    std::vector<message> cut_wire;
    for (const auto& m : cut) cut_wire.push_back(ania::parse_message(ania::dump(m)));
    CHECK(ania::is_valid_transcript(cut_wire));
    std::vector<message> cut_again = cut;
    CHECK_FALSE(ania::repair_transcript(cut_again).changed());
}

TEST_CASE("a message with tens of thousands of tool calls: the same answers as with few", "[transcript][bad-input]") {
    // Past call_index::linear_max the ids are looked up through a sorted index; the semantics must not change.
    std::vector<ania::tool_call> cs;
    for (int i = 0; i < 40000; ++i) cs.push_back(call("c" + std::to_string(i % 30000)));  // 10,000 duplicates
    std::vector<message> t = {message::user("u"), message::assistant_calls(cs)};
    for (int i = 29999; i >= 0; i -= 2) t.push_back(message::tool_result("c" + std::to_string(i), "r"));  // reversed, half
    t.push_back(message::tool_result("c4", "again"));
    t.push_back(message::tool_result("nope", "?"));
    const auto issues = ania::validate_transcript(t);
    std::size_t dup_ids = 0, unanswered = 0, dup_results = 0, unknown = 0;
    for (const auto& i : issues) {
        dup_ids += i.problem == transcript_problem::duplicate_call_id;
        unanswered += i.problem == transcript_problem::unanswered_call;
        dup_results += i.problem == transcript_problem::duplicate_result;
        unknown += i.problem == transcript_problem::unknown_result;
    }
    CHECK(dup_ids == 10000);
    CHECK(unanswered == 14999);  // the even ones but c4
    CHECK(dup_results == 0);  // c4 is even: answered for the first time by "again"
    CHECK(unknown == 1);
    const auto r = ania::repair_transcript(t);
    CHECK(r.calls_dropped == 10000);
    CHECK(r.results_dropped == 1);
    CHECK(r.results_added == 15000 - 1);
    CHECK(ania::is_valid_transcript(t));
    REQUIRE(t[1].tool_calls.size() == 30000);
    CHECK(t[1].tool_calls[29999].id == "c29999");
    CHECK(t[2] == message::tool_result("c29999", "r"));  // results keep their order, right after the calls
}

TEST_CASE("every transcript problem has its stable name", "[transcript]") {
    using P = transcript_problem;
    const std::vector<std::pair<P, std::string_view>> names = {
        {P::orphan_result, "orphan_result"}, {P::unknown_result, "unknown_result"}, {P::duplicate_result, "duplicate_result"},
        {P::unanswered_call, "unanswered_call"}, {P::duplicate_call_id, "duplicate_call_id"}, {P::invalid_id, "invalid_id"}};
    for (const auto& [p, name] : names) CHECK(ania::to_string(p) == name);
}
