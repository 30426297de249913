// tests/unit/text.cpp -- UTF-8 validation and repair, rune counting and truncation, whitespace, SHA-256.
#include <catch2/catch.hpp>

#include <unistd.h>

#include <cstdio>
#include <random>
#include <stdexcept>
#include <string>
#include <vector>

#include <ania/log.hpp>
#include <ania/agent/tool_registry.hpp>
#include <ania/compressor/llm_summary.hpp>
#include <ania/text/sha256.hpp>
#include <ania/text/shared_text.hpp>
#include <ania/text/utf8.hpp>

using namespace ania::text;
using namespace std::string_literals;

namespace {
const std::string fffd = "\xEF\xBF\xBD";
std::string random_bytes(std::mt19937& rng, std::size_t n) {
    // Biased towards bytes that form (and break) multi-byte sequences.
    static const unsigned char pool[] = {'a', ' ', 0x00, 0x7F, 0x80, 0xBF, 0xC0, 0xC2, 0xDF, 0xE0, 0xE1, 0xED,
                                         0xEF, 0xF0, 0xF1, 0xF4, 0xF5, 0xFF, 0xA0, 0x9F, 0x90, 0x8F};
    std::uniform_int_distribution<std::size_t> pick(0, sizeof pool - 1);
    std::string s;
    for (std::size_t i = 0; i < n; ++i) s.push_back(static_cast<char>(pool[pick(rng)]));
    return s;
}
} // namespace

TEST_CASE("valid UTF-8 is recognised", "[text][utf8]") {
    CHECK(is_valid_utf8(""));
    CHECK(is_valid_utf8("plain ascii, long enough to take the eight-byte path"));
    CHECK(is_valid_utf8("中文 English 😀 ü"));
    CHECK(is_valid_utf8("nul\0inside"s));
    CHECK(is_valid_utf8("\xF4\x8F\xBF\xBF"));  // U+10FFFF
    CHECK(find_invalid_utf8("abc\xFF") == 3);
    CHECK(find_invalid_utf8("0123456789\xC0\xAF") == 10);
}

TEST_CASE("ill-formed sequences are rejected", "[text][utf8]") {
    for (const char* bad : {"\x80", "\xC0\xAF", "\xC1\xBF", "\xE0\x80\xAF", "\xED\xA0\x80", "\xF4\x90\x80\x80",
                            "\xF5\x80\x80\x80", "\xFF", "\xE4\xB8", "\xF0\x9F\x98"})
        CHECK_FALSE(is_valid_utf8(bad));
}

TEST_CASE("is_valid_utf8 (32 bytes a step where the CPU has AVX2) agrees with the byte-wise check", "[text][utf8][simd]") {
    // Every pair of bytes, and pairs followed by two more of interest, at every offset of a 32-byte block
    // boundary, in ASCII and in CJK surroundings; then random mixes of valid and broken sequences.
    const auto same = [](const std::string& s) {
        const bool fast = ania::text::is_valid_utf8(s), slow = ania::text::find_invalid_utf8(s) == std::string_view::npos;
        if (fast != slow) FAIL_CHECK("disagree on " << s.size() << " bytes at the end: " << s.substr(s.size() > 40 ? s.size() - 40 : 0));
        return fast;
    };
    const std::string cjk = "中文字符串在这里重复一下中文字符串在这里重复一下";  // 72 bytes
    const unsigned char tails[] = {0x80, 0x8F, 0x90, 0x9F, 0xA0, 0xBF, 0xC0, 0x41, 0xE0, 0xF0};
    std::size_t valid = 0;
    for (int b0 = 0x80; b0 < 0x100; ++b0)
        for (int b1 = 0; b1 < 0x100; ++b1)
            for (const std::size_t at : {0u, 20u, 28u, 29u, 30u, 31u, 32u, 60u, 61u, 63u})
                for (const unsigned char t : {static_cast<unsigned char>(0x41), tails[(b0 + b1) % 10]}) {
                    std::string s = (b1 & 1) ? std::string(at, 'a') : cjk.substr(0, at / 3 * 3) + std::string(at % 3, 'a');
                    s += static_cast<char>(b0);
                    s += static_cast<char>(b1);
                    s += static_cast<char>(t);
                    s += static_cast<char>(tails[b1 % 10]);
                    const std::string pad = (b0 & 1) ? std::string(40, 'z') : cjk;
                    valid += same(s + pad);
                    (void)same(s);  // the sequence at the very end
                }
    CHECK(valid > 1000);  // the pairs that are valid sequences were seen as such
    // A sequence cut short by the end of the text, at every length around the block size.
    for (std::size_t n = 0; n < 100; ++n)
        for (const std::string end : {"\xf0\x9f\x98", "\xe4\xb8", "\xc3", "\xf0\x9f", "\xf0"}) {
            CHECK_FALSE(same(std::string(n, 'a') + end));
            CHECK(same(std::string(n, 'a') + "😀中é"));
        }
    std::mt19937 rng(42);
    const std::vector<std::string> pieces = {"a", "中", "😀", "é", "\x80", "\xe4\xb8", "\xf0\x9f\x98", "\xed\xa0\x80", "\xc0\xaf",
                                             "\xf4\x90\x80\x80", "\xff", std::string(33, 'x')};
    for (int k = 0; k < 20000; ++k) {
        std::string s;
        for (int j = static_cast<int>(rng() % 40); j > 0; --j) s += pieces[rng() % pieces.size()];
        (void)same(s);
    }
}

TEST_CASE("repair replaces maximal subparts (Unicode Table 3-8)", "[text][utf8]") {
    CHECK(repair_utf8("\x61\xF1\x80\x80\xE1\x80\xC2\x62\x80\x63\x80\xBF\x64") ==
          "a" + fffd + fffd + fffd + "b" + fffd + "c" + fffd + fffd + "d");
    CHECK(repair_utf8("\xED\xA0\x80") == fffd + fffd + fffd);  // surrogate: every byte
    CHECK(repair_utf8("\xC0\xAF") == fffd + fffd);              // overlong
    CHECK(repair_utf8("ok\xE4\xB8") == "ok" + fffd);            // truncated at the end
    CHECK(repair_utf8("中文") == "中文");
    std::string s = "x\xFFy";
    CHECK(repair_utf8_in_place(s));
    CHECK(s == "x" + fffd + "y");
    CHECK_FALSE(repair_utf8_in_place(s));
}

TEST_CASE("repair of random bytes always yields valid UTF-8 and keeps rune counts", "[text][utf8][property]") {
    std::mt19937 rng(20261201);
    for (int round = 0; round < 2000; ++round) {
        const std::string raw = random_bytes(rng, 1 + round % 40);
        const std::string fixed = repair_utf8(raw);
        INFO("round " << round);
        REQUIRE(is_valid_utf8(fixed));
        CHECK(repair_utf8(fixed) == fixed);
        CHECK(rune_count(fixed) == rune_count(raw));
    }
}

TEST_CASE("runes are code points", "[text][utf8]") {
    CHECK(rune_count("") == 0);
    CHECK(rune_count("abc") == 3);
    CHECK(rune_count("你好😀") == 3);
    CHECK(rune_count("a\xFF" "b") == 3);
}

TEST_CASE("truncation never splits a sequence", "[text][utf8]") {
    CHECK(truncate_runes("你好世界", 2) == "你好");
    CHECK(truncate_runes("ab😀c", 3) == "ab😀");
    CHECK(truncate_runes("abc", 10) == "abc");
    CHECK(truncate_runes("abc", 0).empty());
    const std::string s = "混合 mixed 文本 😀 text ü";
    for (std::size_t n = 0; n <= rune_count(s) + 1; ++n) {
        const auto t = truncate_runes(s, n);
        CHECK(is_valid_utf8(t));
        CHECK(rune_count(t) == std::min(n, rune_count(s)));
    }
}

TEST_CASE("white space is trimmed and folded as Go's strings.Fields does", "[text]") {
    CHECK(fold_whitespace("  a \t\n b\xE3\x80\x80" "c  ") == "a b c");  // U+3000 ideographic space
    CHECK(fold_whitespace("\xC2\xA0x\xE2\x80\x83y") == "x y");          // NBSP, em space
    CHECK(fold_whitespace("") == "");
    CHECK(fold_whitespace(" \n\t ") == "");
    CHECK(trim("  中文  ") == "中文");
    CHECK(trim("\xE3\x80\x80 a b \xE3\x80\x80") == "a b");
}

TEST_CASE("trim and truncate_runes equal forward references on random text, invalid sequences included", "[text][property]") {
    // trim() finds the end from the back; the reference decodes everything from the front.
    const auto reference = [](std::string_view s) {
        std::size_t begin = 0;
        while (begin < s.size()) {
            const auto r = decode_rune(s, begin);
            if (!r.valid || !is_space(r.value)) break;
            begin += r.length;
        }
        std::size_t end = begin;
        for (std::size_t pos = begin; pos < s.size();) {
            const auto r = decode_rune(s, pos);
            pos += r.length;
            if (!r.valid || !is_space(r.value)) end = pos;
        }
        return s.substr(begin, end - begin);
    };
    const std::vector<std::string> pieces = {" ", "\t", "a", "中", "\xE3\x80\x80", "\xC2\xA0", "\xE2\x80\x83", "\x80", "\xE3\x80",
                                             "\xE3", "\xFF", "\xC2", "\xF0\x9F\x98\x80", "\xF0\x9F\x98", "\xE2\x80\xA8\x80"};
    std::mt19937 rng(23);
    for (int i = 0; i < 20000; ++i) {
        std::string s;
        for (int k = static_cast<int>(rng() % 8); k > 0; --k) s += pieces[rng() % pieces.size()];
        INFO(s);
        REQUIRE(trim(s) == reference(s));
        for (const std::size_t k : {0, 1, 3, 40}) {
            std::size_t pos = 0;
            for (std::size_t runes = 0; pos < s.size() && runes < k; ++runes) pos += decode_rune(s, pos).length;
            REQUIRE(truncate_runes(s, k) == s.substr(0, pos));
        }
    }
}

TEST_CASE("SHA-256 matches the FIPS 180-4 vectors", "[text][sha256]") {
    CHECK(sha256_hex("") == "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
    CHECK(sha256_hex("abc") == "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
    CHECK(sha256_hex("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq") ==
          "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1");
    CHECK(sha256_hex(std::string(1000000, 'a')) == "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0");
    // Incremental updates split at every position give the same digest.
    const std::string msg = "The quick brown fox jumps over the lazy dog, 64+ bytes long to cross a block boundary!";
    for (std::size_t cut = 0; cut <= msg.size(); ++cut) {
        sha256 h;
        h.update(std::string_view(msg).substr(0, cut)).update(std::string_view(msg).substr(cut));
        CHECK(to_hex(h.finish()) == sha256_hex(msg));
    }
}

TEST_CASE("the image short hash is the first 8 hex digits of SHA-256", "[text][sha256]") {
    CHECK(short_hash("abc") == "ba7816bf");
    const std::string url = "https://multimedia.nt.qq.com.cn/download?appid=1407&fileid=abc";
    CHECK(short_hash(url) == sha256_hex(url).substr(0, 8));
    CHECK(short_hash(url).size() == 8);
}

TEST_CASE("the stderr sink writes its level and above; log_to swallows a throwing sink", "[log]") {
    std::fflush(stderr);
    char path[] = "/tmp/ania-log-XXXXXX";
    const int fd = mkstemp(path);
    REQUIRE(fd >= 0);
    const int saved = dup(2);
    dup2(fd, 2);
    const ania::log_sink sink = ania::stderr_log_sink(ania::log_level::info);
    ania::log_to(sink, ania::log_level::debug, "not shown");
    ania::log_to(sink, ania::log_level::info, "shown");
    ania::log_to(sink, ania::log_level::error, "bad");
    std::fflush(stderr);
    dup2(saved, 2);
    close(saved);
    std::FILE* f = std::fopen(path, "rb");
    std::string out(4096, '\0');
    out.resize(std::fread(out.data(), 1, out.size(), f));
    std::fclose(f);
    close(fd);
    std::remove(path);
    CHECK(out == "ania [info] shown\nania [error] bad\n");
    CHECK(ania::to_string(ania::log_level::warn) == "warn");
    CHECK(ania::to_string(ania::log_level::debug) == "debug");
    CHECK_NOTHROW(ania::log_to([](ania::log_level, std::string_view) { throw std::runtime_error("sink bug"); }, ania::log_level::error, "x"));
    CHECK_NOTHROW(ania::log_to(ania::log_sink{}, ania::log_level::error, "no sink"));
}

#include <ania/detail/simd.hpp>

TEST_CASE("the SIMD kernels equal their portable versions", "[text][simd]") {
    std::mt19937 rng(7);
    for (const std::size_t n : {0u, 1u, 31u, 32u, 33u, 255u * 32u, 255u * 32u + 1u, 20000u}) {
        std::vector<unsigned char> bytes(n);
        for (auto& b : bytes) b = static_cast<unsigned char>(rng());
        std::vector<float> a(n), b(n);
        for (std::size_t i = 0; i < n; ++i) a[i] = static_cast<float>(rng() % 2001) / 1000.0f - 1.0f, b[i] = static_cast<float>(rng() % 2001) / 1000.0f - 1.0f;
        const std::size_t want = ania::detail::count_continuation_portable(bytes.data(), n);
        CHECK(ania::detail::count_continuation(bytes.data(), n) == want);
        const float dot = ania::detail::dot_portable(a.data(), b.data(), n);
        CHECK(ania::detail::dot(a.data(), b.data(), n) == Approx(dot).margin(1e-3));
#ifdef ANIA_DETAIL_X86_DISPATCH
        if (ania::detail::simd::has_avx2_fma()) {  // the kernels themselves, whatever the dispatch picks
            CHECK(ania::detail::simd::count_continuation_avx2(bytes.data(), n) == want);
            CHECK(ania::detail::simd::dot_avx2(a.data(), b.data(), n) == Approx(dot).margin(1e-3));
        }
#endif
    }
}

TEST_CASE("find_invalid_utf8 agrees with decode_rune on random bytes", "[text][utf8][property]") {
    // The validator is written apart from the decoder (it runs over every string a request sends): the
    // decoder is the reference for where the first ill-formed sequence starts.
    const auto reference = [](std::string_view s) {
        for (std::size_t i = 0; i < s.size();) {
            const decoded_rune r = decode_rune(s, i);
            if (!r.valid) return i;
            i += r.length;
        }
        return std::string_view::npos;
    };
    std::mt19937 rng(5);
    std::uniform_int_distribution<std::size_t> len(0, 40);
    for (int i = 0; i < 200000; ++i) {
        const std::string s = random_bytes(rng, len(rng));
        REQUIRE(find_invalid_utf8(s) == reference(s));
    }
}

TEST_CASE("shared_text: a default is a literal by view, a set text one copy every copy shares", "[text]") {
    const ania::tool_texts defaults;
    const ania::tool_texts copy = defaults;
    CHECK(copy.unknown_tool.data() == defaults.unknown_tool.data());  // no copy of the text
    CHECK(copy.unknown_tool == "错误：未知工具 {name}");
    CHECK(ania::summary_options{}.prompt.data() == ania::summary_prompt_zh.data());
    ania::tool_texts mine;
    std::string source = "no tool {name}";
    mine.unknown_tool = source;
    source[0] = 'X';  // the text was copied when set: the caller's string may change or go
    const ania::tool_texts shared = mine;
    CHECK(shared.unknown_tool.data() == mine.unknown_tool.data());
    CHECK(shared.unknown_tool == "no tool {name}");
    CHECK(ania::fill_tool_text(shared.unknown_tool, "search") == "no tool search");
    CHECK(std::string(ania::shared_text("abc").view()) + "d" == "abcd");
    CHECK(ania::shared_text().empty());
}
