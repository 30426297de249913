// examples/postgres.cpp -- PostgreSQL by hand: compare-and-swap history and session leases (what a bot over
// postgres_store uses). The snippets of docs/postgres.md are regions of this file. Needs a server:
// `postgres "host=/run/postgresql dbname=bot"` (CI builds it; the tests run the same calls on a throwaway cluster).
#include <chrono>
#include <cstdio>
#include <vector>

#include <ania/ania.hpp>
#include <ania/session/postgres_leases.hpp>
#include <ania/store/postgres_store.hpp>

int main(int argc, char** argv) {
    if (argc < 2) {
        std::fprintf(stderr, "usage: postgres DSN\n");
        return 2;
    }
    const std::vector<ania::message> compressed{ania::message::user("以下是之前的对话摘要：\n(摘要)")};
    ania::session_options session_opt;
    // [store]
    ania::postgres_store store({{.dsn = argv[1]}});                            // empty dsn: the PG* variables
    auto [messages, version] = store.load_versioned("g:100001");               // one snapshot
    // ... summarise without holding anything ...
    if (store.replace_if("g:100001", compressed, version) == ania::replace_status::conflict) { /* reload, retry */ }
    // [store]
    // [leases]
    ania::postgres_session_leases leases(store, std::chrono::seconds(30));
    session_opt.lease = leases.hooks(std::chrono::seconds(5));
    // [leases]
    std::printf("%zu messages before; now %zu\n", messages.size(), store.load("g:100001").size());
    return 0;
}
