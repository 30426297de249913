// ania/version.hpp -- version macros, the C++20 check and the ANIA_ASSERT hook.
// SPDX-License-Identifier: MIT
#pragma once

#if !defined(__cplusplus) || (__cplusplus < 202002L && !defined(_MSVC_LANG))
#error "ania requires C++20 (-std=c++20)"
#endif

#define ANIA_VERSION_MAJOR 0
#define ANIA_VERSION_MINOR 1
#define ANIA_VERSION_PATCH 0
#define ANIA_VERSION_STRING "0.1.0"

/// Contract checks (programmer errors). Define ANIA_ASSERT before the first ania include to route them
/// elsewhere; the default is <cassert>'s assert, compiled out with NDEBUG.
#ifndef ANIA_ASSERT
#include <cassert>
#define ANIA_ASSERT(cond, msg) assert((cond) && (msg))
#endif
