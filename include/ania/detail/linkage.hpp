// ania/detail/linkage.hpp -- where ania's non-template functions are defined: in every translation unit that
// includes them (header-only, the default) or once, in the compiled library.
// SPDX-License-Identifier: MIT
//
// Compiled mode (`ANIA_COMPILED_LIB`, which dependency('ania-compiled') / ania-compiled.pc define) is for
// programs whose build time matters: the headers then declare what the library defines (the bodies live in
// the `*-inl.hpp` headers, which only header-only mode includes), the shipped specializations of ania's
// templates are `extern template` (instantiated once, in the library), and the core headers parse neither
// nlohmann_json nor SQLite. Every translation unit of a program must use the same mode. A program that
// includes an -inl header in compiled mode gets one static_assert naming the header to include instead (the
// libraries define ANIA_BUILDING_LIBRARY); <ania/memory/manager-inl.hpp> is the exception, for a memory
// manager over traits of one's own.
#pragma once

#ifdef ANIA_COMPILED_LIB
#define ANIA_HEADER_ONLY 0
#define ANIA_INLINE
#else
#define ANIA_HEADER_ONLY 1
#define ANIA_INLINE inline
#endif

// A member kept out of line under g++ only: see default_compressor (GCC PR 80635, std::optional's false
// "maybe uninitialized" at -O2, which -Werror in a user's build turns into an error).
#if defined(__GNUC__) && !defined(__clang__)
#define ANIA_GCC_NOINLINE [[gnu::noinline]]
#else
#define ANIA_GCC_NOINLINE
#endif
