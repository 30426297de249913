// ania/detail/simd.hpp -- the only place that knows about CPU features: the two kernels that gain from AVX2
// (counting UTF-8 continuation bytes, float dot products), their portable versions, and the run-time choice.
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

/// The dot product of a[0..n) and b[0..n), by the fastest kernel this CPU runs.
[[nodiscard]] inline float dot(const float* a, const float* b, std::size_t n) noexcept {
#ifdef ANIA_DETAIL_X86_DISPATCH
    if (simd::has_avx2_fma()) return simd::dot_avx2(a, b, n);
#endif
    return dot_portable(a, b, n);
}

} // namespace ania::detail
