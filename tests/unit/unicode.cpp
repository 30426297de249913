// tests/unit/unicode.cpp -- the generated Unicode tables agree with ICU on every code point.
#include <catch2/catch.hpp>

#include <string>

#include <unicode/uchar.h>
#include <unicode/uversion.h>

#include <ania/memory/tokenize.hpp>
#include <ania/text/unicode.hpp>
#include <ania/text/utf8.hpp>

namespace {
bool icu_word(UChar32 c) {
    switch (u_charType(c)) {
    case U_UPPERCASE_LETTER: case U_LOWERCASE_LETTER: case U_TITLECASE_LETTER: case U_MODIFIER_LETTER:
    case U_OTHER_LETTER: case U_DECIMAL_DIGIT_NUMBER: return true;
    default: return false;
    }
}
} // namespace

TEST_CASE("to_lower and is_letter_or_digit equal ICU on every code point", "[text][unicode]") {
    UVersionInfo v;
    u_getUnicodeVersion(v);
    INFO("ICU's Unicode " << int(v[0]) << "." << int(v[1]) << ", tables' " << ania::text::detail::unicode_version_major << "."
                          << ania::text::detail::unicode_version_minor);
    // Another ICU may know another Unicode version: the tables must then be regenerated (scripts/gen_unicode_tables.sh).
    REQUIRE(int(v[0]) == ania::text::detail::unicode_version_major);
    REQUIRE(int(v[1]) == ania::text::detail::unicode_version_minor);
    std::size_t lower_bad = 0, word_bad = 0, idempotent_bad = 0, string_bad = 0;
    for (char32_t c = 0; c <= 0x10FFFF; ++c) {
        if (c >= 0xD800 && c <= 0xDFFF) continue;
        const auto want = static_cast<char32_t>(u_tolower(static_cast<UChar32>(c)));
        const char32_t got = ania::text::to_lower(c);
        if (got != want && lower_bad++ < 5) FAIL_CHECK("to_lower(U+" << std::hex << unsigned(c) << ") = " << unsigned(got) << ", ICU " << unsigned(want));
        if (ania::text::to_lower(got) != got) ++idempotent_bad;
        if (ania::text::is_letter_or_digit(c) != icu_word(static_cast<UChar32>(c)) && word_bad++ < 5)
            FAIL_CHECK("is_letter_or_digit(U+" << std::hex << unsigned(c) << ") differs from ICU");
        // lower() over the encoded rune (its fast paths included) gives the encoded mapping.
        std::string one, expect;
        ania::text::append_utf8(one, c);
        ania::text::append_utf8(expect, want);
        if (ania::memory::lower(one) != expect) ++string_bad;
    }
    CHECK(lower_bad == 0);
    CHECK(word_bad == 0);
    CHECK(idempotent_bad == 0);  // the fused indexer's second pass relies on it
    CHECK(string_bad == 0);
}

TEST_CASE("the cases a hand-written table got wrong", "[text][unicode]") {
    using ania::text::to_lower;
    CHECK(to_lower(U'\u0178') == U'\u00FF');  // Ÿ -> ÿ (was Ź)
    CHECK(to_lower(U'\u0386') == U'\u03AC');  // Ά -> ά
    CHECK(to_lower(U'\u038F') == U'\u03CE');  // Ώ -> ώ
    CHECK(to_lower(U'\u03AA') == U'\u03CA');  // Ϊ -> ϊ
    CHECK(to_lower(U'\u1E9E') == U'\u00DF');  // ẞ -> ß: three bytes to two
    CHECK(to_lower(U'\u212A') == U'k');       // KELVIN SIGN -> k: three bytes to one
    CHECK(ania::memory::lower("ÀΆẞ\u212A") == "àάßk");
    CHECK(ania::text::is_letter_or_digit(U'µ'));
    CHECK_FALSE(ania::text::is_letter_or_digit(U'²'));  // No, not Nd
    CHECK(ania::text::is_letter_or_digit(U'\uFF11'));   // full-width 1
    CHECK_FALSE(ania::text::is_letter_or_digit(U'\u0301'));  // a combining mark is not a letter
}
