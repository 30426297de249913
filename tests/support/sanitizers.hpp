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
