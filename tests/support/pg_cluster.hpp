// tests/support/pg_cluster.hpp -- a throwaway PostgreSQL cluster for the tests: initdb + pg_ctl from Debian's
// postgresql-15 in a temporary directory, a Unix socket only, fsync off; started once per test program,
// stopped and removed at exit. As root (CI) the server runs as `nobody`: initdb refuses root.
#pragma once

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <memory>
#include <stdexcept>
#include <string>
#include <string_view>

#include <unistd.h>

namespace ania_test {

class pg_cluster {
public:
    /// The one cluster of this test program (started on first use).
    static pg_cluster& get() {
        static pg_cluster c;
        return c;
    }

    /// A connection string for database `db` of the cluster.
    [[nodiscard]] std::string dsn(const std::string& db = "postgres") const {
        return "host=" + dir_ + " port=5432 user=ania dbname=" + db + " connect_timeout=5";
    }
    [[nodiscard]] const std::string& dir() const noexcept { return dir_; }

    /// Stops and starts the server (the tests of reconnection). `fast`: clients are disconnected.
    void restart() {
        run(ctl() + " -m fast -w restart -l " + dir_ + "/log -o \"" + server_options() + "\" >/dev/null");
    }

    pg_cluster(const pg_cluster&) = delete;
    pg_cluster& operator=(const pg_cluster&) = delete;
    ~pg_cluster() {
        (void)std::system((ctl() + " -m immediate -w stop >/dev/null 2>&1").c_str());
        std::error_code ec;
        std::filesystem::remove_all(dir_, ec);
    }

private:
    pg_cluster() {
        const char* bin = std::getenv("ANIA_PG_BIN");
        bin_ = bin ? bin : "/usr/lib/postgresql/15/bin";
        if (!std::filesystem::exists(bin_ + "/initdb"))
            throw std::runtime_error("pg_cluster: no " + bin_ + "/initdb (install postgresql-15: scripts/setup.sh)");
        // $TMPDIR unless it is too long for a Unix socket path (108 bytes with "/.s.PGSQL.5432").
        const char* base = std::getenv("TMPDIR");
        std::string tmpl = std::string(base && *base && std::string_view(base).size() < 64 ? base : "/tmp") + "/ania-pg-XXXXXX";
        if (!::mkdtemp(tmpl.data())) throw std::runtime_error("pg_cluster: mkdtemp failed");
        dir_ = tmpl;
        as_ = ::geteuid() == 0 ? "runuser -u nobody -- " : "";
        if (::geteuid() == 0) std::filesystem::permissions(dir_, std::filesystem::perms::all);
        run(as_ + bin_ + "/initdb -D " + dir_ + "/data -U ania -A trust -E UTF8 --no-sync >" + dir_ + "/initdb.log 2>&1");
        run(ctl() + " -w start -l " + dir_ + "/log -o \"" + server_options() + "\" >/dev/null");
    }

    [[nodiscard]] std::string ctl() const { return as_ + bin_ + "/pg_ctl -D " + dir_ + "/data"; }
    [[nodiscard]] std::string server_options() const {
        return "-k " + dir_ + " -c listen_addresses='' -c fsync=off -c synchronous_commit=off -c full_page_writes=off -c max_connections=60";
    }
    static void run(const std::string& cmd) {
        if (std::system(cmd.c_str()) != 0) throw std::runtime_error("pg_cluster: failed: " + cmd);
    }

    std::string bin_, dir_, as_;
};

} // namespace ania_test
