// fuzz/fuzz_stream.cpp -- the SSE decoder and the stream accumulator over arbitrary bytes: the events are the
// same whatever the chunking (the first byte chooses the split points), nothing crashes, and the accumulated
// answer is either a failure with a reason or a message that writes as valid JSON; the same for the Anthropic
// accumulator over the same events. The same bytes as a whole answer body: both providers' parse_answer and
// the error reader (http::error_answer) keep the same promise, and each event's data as a body too.
#include <string>
#include <vector>

#include <ania/anthropic/wire.hpp>
#include <ania/http/answer.hpp>
#include <ania/http/sse.hpp>
#include <ania/json.hpp>
#include <ania/openai/wire.hpp>

#include "fuzz.hpp"

namespace {
std::vector<std::string> events_of(std::string_view bytes, std::size_t step) {
    std::vector<std::string> out;
    ania::http::sse_decoder sse(1 << 16);
    const auto on = [&](const ania::http::sse_event& e) { out.emplace_back(std::string(e.event) + '\0' + std::string(e.data)); };
    bool ok = true;
    for (std::size_t i = 0; i < bytes.size() && ok; i += step) ok = sse.feed(bytes.substr(i, step), on);
    if (ok) sse.finish(on);
    else out.emplace_back("failed");
    return out;
}
} // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    if (size == 0) return 0;
    const std::size_t step = 1 + data[0] % 17;
    const std::string_view bytes = ania_fuzz::as_text(data + 1, size - 1);
    const std::vector<std::string> whole = events_of(bytes, bytes.size() + 1), pieces = events_of(bytes, step);
    ANIA_FUZZ_CHECK(whole == pieces);
    // Either a failure with a reason or a message that writes as valid JSON.
    const auto check_answer = [](const ania::completion& c) {
        if (c.ok) {
            const std::string wire = ania::dump(c.reply);
            ANIA_FUZZ_CHECK(ania::text::is_valid_utf8(wire));
            ANIA_FUZZ_CHECK(ania::json::accept(wire));  // the writer made valid JSON
        } else {
            ANIA_FUZZ_CHECK(!c.error.empty());
        }
    };
    const auto check = [&](auto acc) {
        for (const std::string& e : whole) acc.add(std::string_view(e).substr(e.find('\0') + 1));
        check_answer(std::move(acc).finish());
    };
    check(ania::openai::stream_accumulator{});
    check(ania::anthropic::stream_accumulator{});
    const auto check_body = [&](std::string_view body) {
        check_answer(ania::openai::parse_answer(body));
        check_answer(ania::anthropic::parse_answer(body));
        const ania::completion e = ania::http::error_answer(400 + data[0] % 200, body);
        ANIA_FUZZ_CHECK(!e.ok && !e.error.empty());
    };
    check_body(bytes);
    for (const std::string& e : whole) check_body(std::string_view(e).substr(e.find('\0') + 1));
    return 0;
}
