#include "everything.hpp"
#include <cstdio>

std::string tu1_dump() {
    auto m = ania::message::user("tu1");
    std::vector<ania::message> v{m};
    ania::repair_transcript(v);
    return ania::dump(m) + ania::text::short_hash("x") + ania::to_json(ania::config{}).dump();
}

int main() {
    const std::string a = tu1_dump(), b = tu2_dump();
    if (a.find("tu1") == std::string::npos || b.find("tu2") == std::string::npos) return 1;
    std::puts("odr: two translation units linked");
    return 0;
}
