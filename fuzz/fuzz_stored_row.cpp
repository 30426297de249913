// fuzz/fuzz_stored_row.cpp -- what a load decodes from rows another tool may have written: a history row
// (sqlite_store parses each with its limits: it may refuse a row, with ania::error only, never with anything
// a caller does not catch) and a memory row's tags and emb columns (never throw, only finite vectors).
// Input: message row \0 tags column \0 emb column.
#include <cmath>

#include <ania/json.hpp>
#include <ania/memory/sqlite_backend.hpp>

#include "fuzz.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    std::string_view rest = ania_fuzz::as_text(data, size);
    std::string_view parts[3];
    for (auto& p : parts) {
        const auto nul = rest.find('\0');
        p = rest.substr(0, nul);
        rest = nul == std::string_view::npos ? std::string_view() : rest.substr(nul + 1);
    }
    try {
        const ania::message m = ania::parse_message(parts[0], ania::parse_limits{});
        ANIA_FUZZ_CHECK(ania::parse_message(ania::dump(m)) == m);
    } catch (const ania::error&) {  // skipped and logged by the store
    }
    ania::memory::entry e;
    (void)ania::memory::detail::decode_columns(parts[1], parts[2], e);
    for (const float x : e.embedding) ANIA_FUZZ_CHECK(std::isfinite(x));
    for (const auto& t : e.tags) ANIA_FUZZ_CHECK(ania::text::is_valid_utf8(t));
    return 0;
}
