// A configuration section of the user's own with a member load_config cannot read: the first error names it.
// EXPECT: unsupported member type
#include <map>

#include <ania/config/io.hpp>

struct my_section {
    std::map<int, int> weights;
};
BOOST_HANA_ADAPT_STRUCT(my_section, weights);

int main() { return ania::load_config<my_section>(ania::json::object()).weights.empty() ? 0 : 1; }
