// fuzz/fuzz_transcript.cpp -- repair_transcript over transcripts built from the bytes (roles, call ids from a
// small alphabet so they collide, invalid UTF-8 in ids): valid afterwards, idempotent, and still valid after
// a dump/parse round trip (what the API sees).
#include <ania/json.hpp>
#include <ania/transcript.hpp>

#include "fuzz.hpp"

namespace {
std::string id_from(std::uint8_t b) {
    static constexpr const char* ids[] = {"a", "b", "c", "call_1", "", "x\xFF", "x\xFE", "\xC0"};
    return ids[b % 8];
}
} // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    std::vector<ania::message> t;
    for (std::size_t i = 0; i + 1 < size && t.size() < 256; i += 2) {
        const std::uint8_t kind = data[i], arg = data[i + 1];
        switch (kind % 5) {
        case 0: t.push_back(ania::message::user("u")); break;
        case 1: t.push_back(ania::message::assistant("a")); break;
        case 2: {
            std::vector<ania::tool_call> calls;
            for (int c = 0; c <= arg % 4; ++c) calls.push_back({id_from(static_cast<std::uint8_t>(arg >> (2 * c))), "function", "f", "{}", {}, {}});
            t.push_back(ania::message::assistant_calls(std::move(calls)));
            break;
        }
        case 3: t.push_back(ania::message::tool_result(id_from(arg), "r")); break;
        default: t.push_back(ania::message::system("s")); break;
        }
    }
    for (const auto policy : {ania::unanswered_call_policy::add_cancelled, ania::unanswered_call_policy::drop_calls}) {
        ania::repair_options opt;
        opt.unanswered = policy;
        std::vector<ania::message> r = t;
        ania::repair_transcript(r, opt);
        ANIA_FUZZ_CHECK(ania::is_valid_transcript(r));
        ANIA_FUZZ_CHECK(ania::validate_transcript(r).empty());
        std::vector<ania::message> again = r;
        ANIA_FUZZ_CHECK(!ania::repair_transcript(again, opt).changed());
        ANIA_FUZZ_CHECK(again == r);
        std::vector<ania::message> wire;
        for (const auto& m : r) wire.push_back(ania::parse_message(ania::dump(m)));
        ANIA_FUZZ_CHECK(wire == r);
    }
    return 0;
}
