// ania/detail/simd.hpp -- the only place that knows about CPU features: the kernels that gain from AVX2
// (counting UTF-8 continuation bytes, float dot products, UTF-8 validation, the JSON escape scan), their
// portable versions, and the run-time choice.
// SPDX-License-Identifier: MIT
//
// Kernels are written with GCC/Clang vector extensions and compiled for AVX2 by a target attribute, so no
// intrinsics header is parsed (<immintrin.h> alone costs a quarter of a second per translation unit); they
// run only where the CPU reports AVX2 (and FMA). Define ANIA_NO_SIMD to use the portable code everywhere.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>

#if !defined(ANIA_NO_SIMD) && defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#define ANIA_DETAIL_X86_DISPATCH 1
#endif

namespace ania::detail {

/// Continuation bytes (10xxxxxx) in p[0..n), eight at a time: bit 7 set and bit 6 clear. The per-byte
/// flags are summed with a multiply (no popcount: baseline x86-64 has no instruction for it).
[[nodiscard]] inline std::size_t count_continuation_portable(const unsigned char* p, std::size_t n) noexcept {
    std::size_t c = 0, i = 0;
    for (; i + 8 <= n; i += 8) {
        std::uint64_t w;
        std::memcpy(&w, p + i, 8);
        const std::uint64_t flags = (w & ~(w << 1) & 0x8080808080808080ULL) >> 7;  // 0 or 1 per byte
        c += static_cast<std::size_t>((flags * 0x0101010101010101ULL) >> 56);
    }
    for (; i < n; ++i) c += (p[i] & 0xC0) == 0x80;
    return c;
}

inline float dot_portable(const float* a, const float* b, std::size_t n) noexcept {
    // Eight independent sums so that the compiler can vectorise without -ffast-math.
    float s[8] = {};
    std::size_t i = 0;
    for (; i + 8 <= n; i += 8)
        for (std::size_t k = 0; k < 8; ++k) s[k] += a[i + k] * b[i + k];
    float total = ((s[0] + s[1]) + (s[2] + s[3])) + ((s[4] + s[5]) + (s[6] + s[7]));
    for (; i < n; ++i) total += a[i] * b[i];
    return total;
}

#ifdef ANIA_DETAIL_X86_DISPATCH
namespace simd {
using i8x32 = signed char __attribute__((vector_size(32)));
using f32x8 = float __attribute__((vector_size(32)));

/// Continuation bytes, 32 at a time: as signed bytes they are exactly those below 0xC0 (-64) and at or above
/// 0x80 (-128), i.e. below -64. Lane counters are summed before they can wrap (255 steps).
__attribute__((target("avx2"))) inline std::size_t count_continuation_avx2(const unsigned char* p, std::size_t n) noexcept {
    const i8x32 limit = i8x32{} + static_cast<signed char>(-64);
    std::size_t c = 0, i = 0;
    while (i + 32 <= n) {
        i8x32 acc = {};
        const std::size_t blocks = (n - i) / 32 < 255 ? (n - i) / 32 : 255;
        for (std::size_t b = 0; b < blocks; ++b, i += 32) {
            i8x32 v;
            std::memcpy(&v, p + i, 32);
            acc -= (v < limit);  // a true lane is -1
        }
        for (int k = 0; k < 32; ++k) c += static_cast<unsigned char>(acc[k]);
    }
    return c + count_continuation_portable(p + i, n - i);
}

__attribute__((target("avx2,fma"))) inline f32x8 load(const float* p) noexcept {
    f32x8 v;
    std::memcpy(&v, p, sizeof v);
    return v;
}

/// AVX2 + FMA, 32 floats a step.
__attribute__((target("avx2,fma"))) inline float dot_avx2(const float* a, const float* b, std::size_t n) noexcept {
    f32x8 s0 = {}, s1 = {}, s2 = {}, s3 = {};
    std::size_t i = 0;
    for (; i + 32 <= n; i += 32) {
        s0 = __builtin_ia32_vfmaddps256(load(a + i), load(b + i), s0);
        s1 = __builtin_ia32_vfmaddps256(load(a + i + 8), load(b + i + 8), s1);
        s2 = __builtin_ia32_vfmaddps256(load(a + i + 16), load(b + i + 16), s2);
        s3 = __builtin_ia32_vfmaddps256(load(a + i + 24), load(b + i + 24), s3);
    }
    const f32x8 sum = (s0 + s1) + (s2 + s3);
    const float total = ((sum[0] + sum[1]) + (sum[2] + sum[3])) + ((sum[4] + sum[5]) + (sum[6] + sum[7]));
    return total + dot_portable(a + i, b + i, n - i);
}

using u8x32 = unsigned char __attribute__((vector_size(32)));
using c8x32 = char __attribute__((vector_size(32)));

__attribute__((target("avx2"))) inline u8x32 load_u8(const unsigned char* p) noexcept {
    u8x32 v;
    std::memcpy(&v, p, 32);
    return v;
}
__attribute__((target("avx2"))) inline int movemask(u8x32 v) noexcept {
    return __builtin_ia32_pmovmskb256(reinterpret_cast<c8x32&>(v));
}
/// table[idx & 15] per byte (idx < 0x80; the table repeated in both 128-bit lanes).
__attribute__((target("avx2"))) inline u8x32 lookup16(u8x32 idx, u8x32 table) noexcept {
    const c8x32 r = __builtin_ia32_pshufb256(reinterpret_cast<c8x32&>(table), reinterpret_cast<c8x32&>(idx));
    return reinterpret_cast<const u8x32&>(r);
}

/// The bytes of the 32 at `p` that JSON text must escape ('"', '\\', below 0x20), as a bit mask.
__attribute__((target("avx2"))) inline unsigned escape_mask(const unsigned char* p) noexcept {
    const u8x32 v = load_u8(p);
    const auto need = (v == '"') | (v == '\\') | (v < 0x20);
    return static_cast<unsigned>(movemask(reinterpret_cast<const u8x32&>(need)));
}

/// The first byte at or after `i` that JSON text must escape, or n; n - i >= 32. The last block is read
/// overlapping the one before (the bytes before `i` masked off), so no byte is left to a slower loop.
__attribute__((target("avx2"))) inline std::size_t escape_scan_avx2(const unsigned char* p, std::size_t i, std::size_t n) noexcept {
    for (; i + 32 <= n; i += 32)
        if (const unsigned m = escape_mask(p + i)) return i + static_cast<std::size_t>(__builtin_ctz(m));
    if (i == n) return n;
    const std::size_t last = n - 32;
    const unsigned m = escape_mask(p + last) >> (i - last);
    return m ? i + static_cast<std::size_t>(__builtin_ctz(m)) : n;
}

struct lane_table {
    unsigned char b[32];
};
constexpr lane_table in_both_lanes(const unsigned char (&t)[16]) noexcept {
    lane_table r{};
    for (int i = 0; i < 32; ++i) r.b[i] = t[i % 16];
    return r;
}

/// Whether the 32 bytes at `p` (with the three before them at p[-3..-1]) hold no ill-formed UTF-8 pair or
/// triple: the lookup algorithm of Keiser and Lemire ("Validating UTF-8 in less than one instruction per
/// byte", 2021), with the previous bytes read by unaligned loads instead of lane shuffles. An error
/// leaves bits set in the returned vector.
__attribute__((target("avx2"))) inline u8x32 utf8_block_errors(const unsigned char* p) noexcept {
    constexpr unsigned char too_short = 1 << 0, too_long = 1 << 1, overlong_3 = 1 << 2, too_large = 1 << 3, surrogate = 1 << 4,
                            overlong_2 = 1 << 5, too_large_1000 = 1 << 6, overlong_4 = 1 << 6, two_conts = 1 << 7;
    constexpr unsigned char carry = too_short | too_long | two_conts;
    static constexpr unsigned char b1h[16] = {too_long, too_long, too_long, too_long, too_long, too_long, too_long, too_long,
                                              two_conts, two_conts, two_conts, two_conts, too_short | overlong_2, too_short,
                                              too_short | overlong_3 | surrogate, too_short | too_large | too_large_1000 | overlong_4};
    static constexpr unsigned char b1l[16] = {carry | overlong_3 | overlong_2 | overlong_4, carry | overlong_2, carry, carry,
                                              carry | too_large, carry | too_large | too_large_1000, carry | too_large | too_large_1000,
                                              carry | too_large | too_large_1000, carry | too_large | too_large_1000,
                                              carry | too_large | too_large_1000, carry | too_large | too_large_1000,
                                              carry | too_large | too_large_1000, carry | too_large | too_large_1000,
                                              carry | too_large | too_large_1000 | surrogate, carry | too_large | too_large_1000,
                                              carry | too_large | too_large_1000};
    static constexpr unsigned char b2h[16] = {too_short, too_short, too_short, too_short, too_short, too_short, too_short, too_short,
                                              too_long | overlong_2 | two_conts | overlong_3 | too_large_1000 | overlong_4,
                                              too_long | overlong_2 | two_conts | overlong_3 | too_large,
                                              too_long | overlong_2 | two_conts | surrogate | too_large,
                                              too_long | overlong_2 | two_conts | surrogate | too_large,
                                              too_short, too_short, too_short, too_short};
    static constexpr lane_table t1h = in_both_lanes(b1h), t1l = in_both_lanes(b1l), t2h = in_both_lanes(b2h);
    const u8x32 input = load_u8(p), prev1 = load_u8(p - 1), prev2 = load_u8(p - 2), prev3 = load_u8(p - 3);
    const u8x32 sc = lookup16(prev1 >> 4, load_u8(t1h.b)) & lookup16(prev1 & 0x0F, load_u8(t1l.b)) & lookup16(input >> 4, load_u8(t2h.b));
    const auto must23 = (prev2 >= 0xE0) | (prev3 >= 0xF0);  // a third or fourth byte: must be a continuation
    return (reinterpret_cast<const u8x32&>(must23) & 0x80) ^ sc;
}

/// Whether p[0..n) is valid UTF-8 (n >= 32).
__attribute__((target("avx2"))) inline bool utf8_valid_avx2(const unsigned char* p, std::size_t n) noexcept {
    u8x32 err = {};
    unsigned char first[35] = {};  // three ASCII bytes before the text, then its first block
    std::memcpy(first + 3, p, 32);
    err |= utf8_block_errors(first + 3);
    std::size_t i = 32;
    for (; i + 32 <= n; i += 32) {
        // A block of ASCII after ASCII (its three bytes before included) has nothing to check.
        if (movemask(load_u8(p + i) | load_u8(p + i - 3)) == 0) continue;
        err |= utf8_block_errors(p + i);
    }
    if (i < n) {  // the last bytes, followed by ASCII: a sequence cut short at the end shows as too short
        unsigned char last[35] = {};
        std::memcpy(last, p + i - 3, n - i + 3);
        err |= utf8_block_errors(last + 3);
    } else {  // a sequence cut short by the end itself
        if (p[n - 1] >= 0xC0 || p[n - 2] >= 0xE0 || p[n - 3] >= 0xF0) return false;
    }
    const auto bad = err != 0;
    return movemask(reinterpret_cast<const u8x32&>(bad)) == 0;
}

[[nodiscard]] inline bool has_avx2() noexcept {
    static const bool yes = __builtin_cpu_supports("avx2");
    return yes;
}
[[nodiscard]] inline bool has_avx2_fma() noexcept {
    static const bool yes = __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
    return yes;
}
} // namespace simd
#endif

/// Continuation bytes in p[0..n), by the fastest kernel this CPU runs.
[[nodiscard]] inline std::size_t count_continuation(const unsigned char* p, std::size_t n) noexcept {
#ifdef ANIA_DETAIL_X86_DISPATCH
    if (n >= 32 && simd::has_avx2()) return simd::count_continuation_avx2(p, n);
#endif
    return count_continuation_portable(p, n);
}

/// Whether p[0..n) is valid UTF-8, by AVX2 when the CPU has it and the text is long enough to gain; else
/// nullopt-like -1: the caller's portable check decides.
[[nodiscard]] inline int utf8_valid_fast(const unsigned char* p, std::size_t n) noexcept {
#ifdef ANIA_DETAIL_X86_DISPATCH
    if (n >= 32 && simd::has_avx2()) return simd::utf8_valid_avx2(p, n) ? 1 : 0;
#endif
    (void)p;
    (void)n;
    return -1;
}

/// The first byte at or after `i` that a JSON string must escape (or n), or, for fewer than 32 bytes left or
/// without AVX2, `i`: the caller scans on.
[[nodiscard]] inline std::size_t escape_scan(const unsigned char* p, std::size_t i, std::size_t n) noexcept {
#ifdef ANIA_DETAIL_X86_DISPATCH
    if (n - i >= 32 && simd::has_avx2()) return simd::escape_scan_avx2(p, i, n);
#endif
    (void)p;
    (void)n;
    return i;
}

/// The dot product of a[0..n) and b[0..n), by the fastest kernel this CPU runs.
[[nodiscard]] inline float dot(const float* a, const float* b, std::size_t n) noexcept {
#ifdef ANIA_DETAIL_X86_DISPATCH
    if (simd::has_avx2_fma()) return simd::dot_avx2(a, b, n);
#endif
    return dot_portable(a, b, n);
}

} // namespace ania::detail
