#include "everything.hpp"

std::string tu2_dump() {
    auto m = ania::message::user("tu2");
    std::vector<ania::message> v{m};
    ania::repair_transcript(v);
    return ania::dump(m) + ania::text::short_hash("y") + ania::to_json(ania::config{}).dump();
}
