// The default traits name no model: the first error says to set Traits::client.
// EXPECT: Traits::client is not set
#include <ania/ania.hpp>

int main() { return sizeof(ania::basic_agent<>) > 0 ? 0 : 1; }
