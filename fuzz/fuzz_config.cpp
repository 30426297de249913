// fuzz/fuzz_config.cpp -- parse_config throws only ania::error (invalid_config, parse_error or limit_exceeded),
// and what it accepts is valid and round-trips through to_json.
#include <ania/config.hpp>

#include "fuzz.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    ania::config c;
    try {
        c = ania::parse_config(ania_fuzz::as_text(data, size));
    } catch (const ania::error& e) {
        ANIA_FUZZ_CHECK(e.code() == ania::errc::invalid_config || e.code() == ania::errc::parse_error ||
                        e.code() == ania::errc::limit_exceeded);
        return 0;
    }
    ania::validate(c);  // throws (and so aborts the fuzzer) if parse_config let an invalid value through
    ANIA_FUZZ_CHECK(ania::to_json(ania::load_config(ania::to_json(c))) == ania::to_json(c));
    return 0;
}
