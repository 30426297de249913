// tests/support/random_messages.hpp -- random messages of every shape a history holds, for property tests of
// the wire format (message.cpp) and of the request body (wire_cache.cpp).
#pragma once

#include <random>
#include <string>
#include <vector>

#include <ania/json.hpp>
#include <ania/message.hpp>

namespace ania_test {

/// Text from pieces that JSON escaping and UTF-8 handling care about; `broken` adds invalid UTF-8 (a lone
/// byte, a cut sequence), which the writer must repair as dump does.
inline std::string random_text(std::mt19937& rng, bool broken = false) {
    using namespace std::string_literals;
    static const std::vector<std::string> pieces = {"hello", " ", "中文", "😀", "\n", "\"quoted\"", "\\", "\t", "ü", "\0"s,
                                                    "{\"json\":1}", "[图片 1a2b3c4d]", "\x7f", "/", "\xff\xfe", "\xe4\xb8"};
    std::uniform_int_distribution<std::size_t> n(0, 6), pick(0, pieces.size() - (broken ? 1 : 3));
    std::string s;
    for (std::size_t i = n(rng); i > 0; --i) s += pieces[pick(rng)];
    return s;
}

/// A system, user (text or text + image), call, result or assistant message, sometimes with reasoning, a
/// name or a provider's member; `broken` also gives invalid UTF-8 and reasoning-only replies.
inline ania::message random_message(std::mt19937& rng, bool broken = false) {
    using ania::message;
    std::uniform_int_distribution<int> kind(0, broken ? 6 : 5), coin(0, 1), calls(1, 3);
    const auto text = [&] { return random_text(rng, broken); };
    message m;
    switch (kind(rng)) {
    case 0: m = message::system(text()); break;
    case 1: m = message::user(text()); break;
    case 2:
        m = message::user({ania::content_part::make_text(text()), ania::content_part::make_image("data:image/png;base64,iVBORw0KGgo=", "low")});
        break;
    case 3: {
        std::vector<ania::tool_call> cs;
        for (int i = calls(rng); i > 0; --i)
            cs.push_back({"call_" + std::to_string(i), "function", "fn" + std::to_string(i), "{\"q\":\"" + text() + "\"}", {}, {}});
        m = message::assistant_calls(std::move(cs));
        if (coin(rng)) m.reasoning_content = text();
        break;
    }
    case 4: m = message::tool_result("call_1", text()); break;
    case 6:
        m = message::assistant("");
        m.reasoning_content = text();
        break;
    default:
        m = message::assistant(text());
        if (coin(rng)) m.name = "ania";
        break;
    }
    if (coin(rng)) m.extra = ania::members_from(ania::json{{"x_provider", text()}});
    return m;
}

} // namespace ania_test
