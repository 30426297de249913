// fuzz/fuzz_memory_tools.cpp -- the four memory tools' handlers with arbitrary arguments, against one manager:
// a handler never throws, replies are bounded, the scope cap and the stored caps always hold.
#include <ania/memory/manager.hpp>
#include <ania/memory/tools.hpp>

#include "fuzz.hpp"

namespace {
struct harness {
    ania::memory::ram_backend backend;
    ania::memory::manager manager;
    std::vector<ania::tool> tools;
    harness() : manager(backend, [] {
                    ania::memory::manager_options o;
                    o.log = [](ania::log_level, std::string_view) {};
                    o.max_entries = 20;
                    o.seed = 1;
                    return o;
                }()),
                tools(ania::memory::make_tools(manager, ania::memory::scope::from("g:1"))) {}
};
} // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    static harness h;  // state carries over between inputs, as a long conversation's does
    if (size == 0) return 0;
    const ania::tool& t = h.tools[data[0] % h.tools.size()];
    std::string reply;
    try {
        reply = t.handler(ania_fuzz::as_text(data + 1, size - 1));
    } catch (...) {
        ANIA_FUZZ_CHECK(!"a memory tool handler threw");
    }
    ANIA_FUZZ_CHECK(ania::text::is_valid_utf8(reply));
    const auto& opt = h.manager.options();
    const auto entries = h.manager.list(ania::memory::scope::from("g:1"));
    ANIA_FUZZ_CHECK(entries.size() <= opt.max_entries);
    for (const auto& e : entries) {
        ANIA_FUZZ_CHECK(ania::text::rune_count(e.content) <= opt.max_content_runes);
        ANIA_FUZZ_CHECK(ania::text::rune_count(e.user_id) <= opt.max_user_id_runes);
        ANIA_FUZZ_CHECK(e.tags.size() <= opt.max_tags);
        ANIA_FUZZ_CHECK(!e.content.empty());
    }
    // A reply holds at most every entry with its fields, and what it echoes is cut.
    ANIA_FUZZ_CHECK(reply.size() <= 1024 + entries.size() * 4 * (opt.max_content_runes + opt.max_user_id_runes +
                                                                   opt.max_tags * (opt.max_tag_runes + 2) + 64));
    return 0;
}
