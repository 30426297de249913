// ania/detail/dot.hpp -- dot products of float vectors (embeddings), AVX2 + FMA where the CPU has them.
// SPDX-License-Identifier: MIT
#pragma once

#include <algorithm>
#include <cstddef>
#include <vector>

#if defined(__x86_64__)
#include <immintrin.h>
#endif

namespace ania::detail {

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

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
/// AVX2 + FMA, 32 floats a step (compiled for those, called only where the CPU has them).
__attribute__((target("avx2,fma"))) inline float dot_avx2(const float* a, const float* b, std::size_t n) noexcept {
    __m256 s0 = _mm256_setzero_ps(), s1 = _mm256_setzero_ps(), s2 = _mm256_setzero_ps(), s3 = _mm256_setzero_ps();
    std::size_t i = 0;
    for (; i + 32 <= n; i += 32) {
        s0 = _mm256_fmadd_ps(_mm256_loadu_ps(a + i), _mm256_loadu_ps(b + i), s0);
        s1 = _mm256_fmadd_ps(_mm256_loadu_ps(a + i + 8), _mm256_loadu_ps(b + i + 8), s1);
        s2 = _mm256_fmadd_ps(_mm256_loadu_ps(a + i + 16), _mm256_loadu_ps(b + i + 16), s2);
        s3 = _mm256_fmadd_ps(_mm256_loadu_ps(a + i + 24), _mm256_loadu_ps(b + i + 24), s3);
    }
    const __m256 sum = _mm256_add_ps(_mm256_add_ps(s0, s1), _mm256_add_ps(s2, s3));
    alignas(32) float lanes[8];
    _mm256_store_ps(lanes, sum);
    float total = ((lanes[0] + lanes[1]) + (lanes[2] + lanes[3])) + ((lanes[4] + lanes[5]) + (lanes[6] + lanes[7]));
    return total + dot_portable(a + i, b + i, n - i);
}
#endif

inline float dot(const std::vector<float>& a, const std::vector<float>& b) noexcept {
    const std::size_t n = std::min(a.size(), b.size());
#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
    static const bool fast = __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
    if (fast) return dot_avx2(a.data(), b.data(), n);
#endif
    return dot_portable(a.data(), b.data(), n);
}

} // namespace ania::detail
