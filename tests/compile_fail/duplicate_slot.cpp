// A slot given twice in the named-slot form.
// EXPECT: a slot is given twice
#include <ania/ania.hpp>

struct client {
    ania::completion complete(const ania::chat_request&);
};
using my_agent = ania::agent_of<ania::slot::client<client>, ania::slot::store<ania::ram_store>,
                                ania::slot::store<ania::ram_store>>;
int main() { return sizeof(my_agent) > 0 ? 0 : 1; }
