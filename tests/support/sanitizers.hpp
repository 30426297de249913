// tests/support/sanitizers.hpp -- which sanitizer a test is built with: ANIA_TEST_ASAN, ANIA_TEST_TSAN.
// g++ says so with __SANITIZE_*__, clang++ with __has_feature. Tests that count the heap (mallinfo2, a
// replaced operator new) skip those checks where the sanitizer's allocator would not show them.
#pragma once

#if defined(__SANITIZE_ADDRESS__)
#define ANIA_TEST_ASAN 1
#elif defined(__SANITIZE_THREAD__)
#define ANIA_TEST_TSAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define ANIA_TEST_ASAN 1
#elif __has_feature(thread_sanitizer)
#define ANIA_TEST_TSAN 1
#endif
#endif

namespace ania_test {
/// Rounds of a stress case under a sanitizer: a round runs 10-20x slower there (a thread start under TSan far
/// more), and what the sanitizer watches for (a race, a use after free) needs an ordering once, not thousands
/// of times. The plain builds keep the full count.
#if defined(ANIA_TEST_ASAN) || defined(ANIA_TEST_TSAN)
inline constexpr int stress_rounds(int rounds) { return rounds / 5; }
#else
inline constexpr int stress_rounds(int rounds) { return rounds; }
#endif
} // namespace ania_test
