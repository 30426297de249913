// Compiled mode: a program that includes an -inl header would define what the library defines (a duplicate
// symbol at link time): the first error says which header to include instead.
// EXPECT: include <ania/transcript.hpp>
#define ANIA_COMPILED_LIB
#include <ania/transcript-inl.hpp>

int main() { return 0; }
