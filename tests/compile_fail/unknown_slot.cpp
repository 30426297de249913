// An argument of agent_of that is not a slot.
// EXPECT: every argument must be a slot
#include <ania/ania.hpp>

struct client {
    ania::completion complete(const ania::chat_request&);
};
using my_agent = ania::agent_of<ania::slot::client<client>, ania::ram_store>;
int main() { return sizeof(my_agent) > 0 ? 0 : 1; }
