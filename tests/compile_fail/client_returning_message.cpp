// A client whose complete returns a message: the first error names Traits::client and ania::chat_client.
// EXPECT: Traits::client does not model ania::chat_client
#include <ania/ania.hpp>

struct client {
    ania::message complete(const ania::chat_request&);
};
using my_agent = ania::agent_of<ania::slot::client<client>>;
int main() { return sizeof(my_agent) > 0 ? 0 : 1; }
