// tests/consumer/app.cpp -- a user program: ania found as a subproject, through pkg-config or through CMake.
#include <cstdio>
#include <vector>

#include <ania/ania.hpp>
#ifdef ANIA_CONSUMER_SQLITE
#include <ania/store/sqlite_store.hpp>
#endif

int main() {
    std::vector<ania::message> history = {ania::message::user("hi"), ania::message::tool_result("orphan", "x")};
    ania::repair_transcript(history);
#ifdef ANIA_CONSUMER_SQLITE
    ania::sqlite_store store(":memory:");
    store.append("s", history);
    history = store.load("s");
#endif
    std::printf("ania %s: %s\n", ANIA_VERSION_STRING, ania::dump(history.at(0)).c_str());
    return history.size() == 1 ? 0 : 1;
}
