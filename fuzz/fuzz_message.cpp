// fuzz/fuzz_message.cpp -- parse_message (the direct parser where it applies) against the general parser:
// both accept the same texts, give the same message, throw only ania::error; what parses dumps and parses
// back to itself.
#include <ania/json.hpp>

#include "fuzz.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    const std::string_view text = ania_fuzz::as_text(data, size);
    ania::parse_limits limits;
    limits.max_bytes = 1 << 20;
    std::optional<ania::message> fast, general;
    try {
        fast = ania::parse_message(text, limits);
    } catch (const ania::error&) {
    }
    try {
        general = ania::detail::parse_message_general(text, limits);
    } catch (const ania::error&) {
    }
    ANIA_FUZZ_CHECK(fast.has_value() == general.has_value());
    if (!fast) return 0;
    ANIA_FUZZ_CHECK(*fast == *general);
    const std::string wire = ania::dump(*fast);  // never throws, whatever the strings hold
    ANIA_FUZZ_CHECK(ania::parse_message(wire) == *fast);
    ANIA_FUZZ_CHECK(ania::dump(ania::parse_message(wire)) == wire);
    return 0;
}
