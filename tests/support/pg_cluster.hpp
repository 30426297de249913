// tests/support/pg_cluster.hpp -- a throwaway PostgreSQL cluster for the tests: initdb + pg_ctl from Debian's
// postgresql-15 in a temporary directory, a Unix socket only, fsync off; started once per test program,
// stopped and removed at exit. As root (CI) the server runs as `nobody`: initdb refuses root.
// ANIA_PG_POOLER=pgbouncer puts Debian's PgBouncer in front of it in transaction mode (as `nobody` too: it
// refuses root); dsn() then names PgBouncer's socket and pooled() is true.
#pragma once

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <memory>
#include <stdexcept>
#include <string>
#include <string_view>

#include <unistd.h>

#include <libpq-fe.h>

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
        return "host=" + dir_ + " port=" + (pooled_ ? "6432" : "5432") + " user=ania dbname=" + db + " connect_timeout=5";
    }
    /// True when the connections go through PgBouncer in transaction mode.
    [[nodiscard]] bool pooled() const noexcept { return pooled_; }
    [[nodiscard]] const std::string& dir() const noexcept { return dir_; }

    /// Stops and starts the server (the tests of reconnection). `fast`: clients are disconnected.
    void restart() {
        run(ctl() + " -m fast -w restart -l " + dir_ + "/log -o \"" + server_options() + "\" >/dev/null");
    }

    pg_cluster(const pg_cluster&) = delete;
    pg_cluster& operator=(const pg_cluster&) = delete;
    ~pg_cluster() {
        if (pooled_) (void)std::system(("kill $(cat " + dir_ + "/pgbouncer.pid) 2>/dev/null").c_str());
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
        if (const char* pooler = std::getenv("ANIA_PG_POOLER"); pooler && std::string_view(pooler) == "pgbouncer") start_pgbouncer();
    }

    void start_pgbouncer() {
        const char* bin = std::getenv("ANIA_PGBOUNCER");
        const std::string exe = bin ? bin : "/usr/sbin/pgbouncer";
        if (!std::filesystem::exists(exe)) throw std::runtime_error("pg_cluster: no " + exe + " (install pgbouncer: scripts/setup.sh)");
        write(dir_ + "/userlist.txt", "\"ania\" \"\"\n");
        write(dir_ + "/pgbouncer.ini", "[databases]\n* = host=" + dir_ + " port=5432\n[pgbouncer]\npool_mode = transaction\n"
              "listen_addr =\nlisten_port = 6432\nunix_socket_dir = " + dir_ + "\nauth_type = trust\nauth_file = " + dir_ +
              "/userlist.txt\nmax_client_conn = 400\ndefault_pool_size = 40\nlogfile = " + dir_ + "/pgbouncer.log\npidfile = " +
              dir_ + "/pgbouncer.pid\n");
        run(as_ + exe + " -d -q " + dir_ + "/pgbouncer.ini");
        pooled_ = true;
        // -d returns once it forked; wait until it accepts connections (its socket file exists from bind(), a
        // moment before listen(): a connection then is refused, which failed a whole run once).
        bool up = false;
        for (int i = 0; i < 500 && !up; ++i) {
            up = ::PQping(dsn().c_str()) == PQPING_OK;
            if (!up) ::usleep(10'000);
        }
        if (!up) throw std::runtime_error("pg_cluster: PgBouncer did not start (see its log)");
    }
    static void write(const std::string& path, const std::string& text) {
        std::FILE* f = std::fopen(path.c_str(), "w");
        if (!f) throw std::runtime_error("pg_cluster: cannot write " + path);
        std::fputs(text.c_str(), f);
        std::fclose(f);
    }

    [[nodiscard]] std::string ctl() const { return as_ + bin_ + "/pg_ctl -D " + dir_ + "/data"; }
    [[nodiscard]] std::string server_options() const {
        return "-k " + dir_ + " -c listen_addresses='' -c fsync=off -c synchronous_commit=off -c full_page_writes=off -c max_connections=60";
    }
    static void run(const std::string& cmd) {
        if (std::system(cmd.c_str()) != 0) throw std::runtime_error("pg_cluster: failed: " + cmd);
    }

    std::string bin_, dir_, as_;
    bool pooled_ = false;
};

} // namespace ania_test
