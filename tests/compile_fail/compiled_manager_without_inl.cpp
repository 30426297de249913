// Compiled mode: a memory manager over traits of one's own, without the header of its member definitions:
// the first error names the header to include (the library instantiates the shipped traits only).
// EXPECT: needs #include <ania/memory/manager-inl.hpp>
#define ANIA_COMPILED_LIB
#include <ania/ania.hpp>

struct my_traits : ania::memory::default_memory_traits {
    using similarity = ania::memory::idf_similarity;
};

int main() {
    ania::memory::ram_backend backend;
    ania::memory::basic_manager<my_traits> memory(backend);
    return memory.enabled() ? 0 : 1;
}
