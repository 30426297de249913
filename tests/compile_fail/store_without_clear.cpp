// A store without `clear`: the first error names Traits::store and ania::history_store.
// EXPECT: Traits::store does not model ania::history_store
#include <ania/ania.hpp>

struct store_without_clear {
    std::vector<ania::message> load(std::string_view);
    void append(std::string_view, std::span<const ania::message>);
    void replace(std::string_view, std::span<const ania::message>);
};
struct client {
    ania::completion complete(const ania::chat_request&);
};
struct my_traits : ania::default_agent_traits {
    using store = store_without_clear;
    using client = ::client;
};
using my_agent = ania::basic_agent<my_traits>;
my_agent::client_type* use;
int main() { return sizeof(my_agent) > 0 ? 0 : 1; }
