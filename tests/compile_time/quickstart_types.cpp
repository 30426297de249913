// tests/compile_time/quickstart_types.cpp -- every type the quickstart composes, constructed: what scripts/compile_time.sh times.
#include <ania/ania.hpp>
#include <ania/memory/sqlite_backend.hpp>
#include <ania/store/sqlite_store.hpp>

struct client {
    ania::completion complete(const ania::chat_request&) { return ania::completion::failure("x"); }
};

int main() {
    const ania::config cfg = ania::parse_config("{}");
    ania::token_window<ania::char_class_counter> window(ania::from_config<ania::window_options>(cfg));
    ania::default_compressor<client> compressor{client{}};
    ania::sqlite_store store("x.db");
    ania::background_writer<ania::sqlite_store> writer(store);
    ania::memory::sqlite_backend memories("x.db");
    ania::memory::sqlite_manager memory(memories, ania::from_config<ania::memory::manager_options>(cfg));
    const auto tools = ania::memory::make_tools(memory, ania::memory::scope::from("g:1"));
    ania::turn_stats stats;
    (void)ania::maybe_compress(window, compressor, writer, "g:1", stats);
    return tools.size() == 4 ? 0 : 1;  // also run as a test, in compiled mode (tests/meson.build)
}
