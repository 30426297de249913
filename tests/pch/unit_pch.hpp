// tests/pch/unit_pch.hpp -- the precompiled header of the unit tests: Catch2 and the umbrella header, parsed
// once per configuration instead of once per test file. Measured on the 16 unit test executables: g++ -O2
// 102 -> 97 s, clang++ -O0 with ASan+UBSan 62 -> 56 s (code generation is most of a test file's time). Header
// hygiene is not checked here (the PCH comes before a file's own includes): the one-header tests do that.
#include <catch2/catch.hpp>

#include <ania/ania.hpp>
