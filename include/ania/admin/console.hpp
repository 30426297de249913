// ania/admin/console.hpp -- the operator's console: the JSON API of admin/api.hpp and the page of
// admin/page.hpp over HTTP (cpp-httplib: the ania-admin dependency), on its own threads.
//
//     ania::admin::console c({.listen = "127.0.0.1:8700", .token = "a long random secret"}, {.memory = &view});
//     // open http://127.0.0.1:8700/#token=a%20long%20random%20secret
//
// A bot starts one itself when `admin.enabled` (ania::basic_bot, <ania/bot/bot.hpp>): include this header
// and depend on ania-admin.
//
// Security: every /api request needs `Authorization: Bearer <token>` (compared in constant time; 401 and
// nothing done otherwise); a console without a token refuses to start. The page (its script and style
// inlined) is a constant with no data in it, served without the token (a browser cannot send a header with a
// navigation); the script asks for the token. No cookies, so no cross-site request can act for the operator.
// Every response carries a strict Content-Security-Policy (the page's own script and style by their hash,
// nothing else inline, nothing from elsewhere),
// X-Content-Type-Options: nosniff, X-Frame-Options: DENY, Referrer-Policy: no-referrer and
// Cache-Control: no-store. Bodies over `max_body` get 413, clients past the rate limit 429. It listens on
// loopback unless told otherwise. Changes are logged with the operator's address (admin/api.hpp).
// SPDX-License-Identifier: MIT
#pragma once

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstddef>
#include <fstream>
#include <map>
#include <mutex>
#include <string>
#include <string_view>
#include <thread>
#include <utility>

#include <httplib.h>

#if defined(__linux__)
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>
#endif

#include <ania/admin/api.hpp>
#include <ania/admin/page.hpp>
#include <ania/admin/starter.hpp>
#include <ania/config/config.hpp>
#include <ania/defaults.hpp>
#include <ania/detail/concurrency_limit.hpp>
#include <ania/error.hpp>
#include <ania/log.hpp>

namespace ania::admin {

struct console_options {
    std::string listen{defaults::admin_listen};  ///< host:port (port 0: any free port, see console::port)
    std::string token;                           ///< required: a console never runs open
    std::size_t max_body = defaults::admin_max_body;
    double requests_per_second = defaults::admin_requests_per_second;  ///< per remote address; 0: no limit
    double burst = defaults::admin_burst;
    log_sink log = stderr_log_sink();
    /// At most this many API requests are worked on at once, the others wait their turn; 0: one less than the
    /// machine's cores, at least one. The console shares the bot's process: it never takes every core.
    std::size_t busy_threads = 0;
};

/// The console's options from `admin.*`: the token from `admin.token`, else the first line of
/// `admin.token_file`. Throws ania::error (invalid_config) when there is no token.
[[nodiscard]] inline console_options console_options_from(const config& c) {
    console_options o;
    o.listen = c.admin.listen;
    o.token = c.admin.token;
    o.busy_threads = static_cast<std::size_t>(c.admin.busy_threads);  // validated: 0..1024
    o.requests_per_second = c.admin.requests_per_second;
    o.burst = c.admin.burst;
    if (o.token.empty() && !c.admin.token_file.empty()) {
        std::ifstream in(c.admin.token_file);
        if (!in) throw error(errc::invalid_config, "admin.token_file: cannot read " + c.admin.token_file);
        std::getline(in, o.token);
        while (!o.token.empty() && (o.token.back() == '\r' || o.token.back() == ' ')) o.token.pop_back();
    }
    if (o.token.empty()) throw error(errc::invalid_config, "admin: no token (admin.token or admin.token_file): the console never runs open");
    return o;
}

namespace detail {
/// Equal, in a time that depends on the lengths only.
[[nodiscard]] inline bool same_secret(std::string_view a, std::string_view b) noexcept {
    unsigned char diff = a.size() == b.size() ? 0 : 1;
    const std::size_t n = a.size() < b.size() ? a.size() : b.size();
    for (std::size_t i = 0; i < n; ++i) diff |= static_cast<unsigned char>(a[i] ^ b[i]);
    return diff == 0;
}

/// A token bucket per remote address, at most `max_addresses` of them. When the table is full, the buckets that
/// have refilled (the same as no bucket) are dropped, at most once a second; until a place frees up, new
/// addresses share one overflow bucket. The addresses already known keep theirs: a flood of new addresses
/// cannot reset the limit of one that is being refused.
class rate_limiter {
public:
    using clock = std::chrono::steady_clock;
    rate_limiter(double per_second, double burst, std::size_t max_addresses = 4096)
        : rate_(per_second), burst_(burst), max_(max_addresses), overflow_{burst, clock::time_point{}} {}
    [[nodiscard]] bool allow(const std::string& who) { return allow(who, clock::now()); }
    [[nodiscard]] bool allow(const std::string& who, clock::time_point now) {
        if (rate_ <= 0) return true;
        std::lock_guard l(m_);
        auto it = buckets_.find(who);
        if (it == buckets_.end()) {
            if (buckets_.size() >= max_ && now >= next_sweep_) sweep(now);
            if (buckets_.size() >= max_) return take(overflow_, now);
            it = buckets_.try_emplace(who, bucket{burst_, now}).first;
        }
        return take(it->second, now);
    }
    [[nodiscard]] std::size_t addresses() {
        std::lock_guard l(m_);
        return buckets_.size();
    }

private:
    struct bucket {
        double tokens;
        clock::time_point at;
    };
    /// The bucket's tokens at `now`, before the cap: what it had, plus what it earned since.
    double refilled(const bucket& b, clock::time_point now) const {
        return b.tokens + std::chrono::duration<double>(now - b.at).count() * rate_;
    }
    bool take(bucket& b, clock::time_point now) const {
        b.tokens = std::min(burst_, refilled(b, now));
        b.at = now;
        if (b.tokens < 1) return false;
        b.tokens -= 1;
        return true;
    }
    void sweep(clock::time_point now) {
        std::erase_if(buckets_, [&](const auto& kv) { return refilled(kv.second, now) >= burst_; });
        next_sweep_ = now + std::chrono::seconds(1);  // a sweep is O(table): not once per new address
    }
    double rate_, burst_;
    std::size_t max_;
    std::mutex m_;
    std::map<std::string, bucket> buckets_;
    bucket overflow_;
    clock::time_point next_sweep_{};
};
} // namespace detail

namespace detail {
/// The console's worker threads: a pool whose threads run at a lower scheduling priority (Linux: nice 10 for
/// the thread), so that an operator's page, or a script polling the API, takes CPU the bot's turns do not need.
class console_workers final : public httplib::TaskQueue {
public:
    explicit console_workers(std::size_t n) : pool_(n) {}
    void enqueue(std::function<void()> fn) override {
        pool_.enqueue([fn = std::move(fn)] {
            lower_priority();
            fn();
        });
    }
    void shutdown() override { pool_.shutdown(); }

private:
    static void lower_priority() noexcept {
#if defined(__linux__)
        thread_local bool done = false;
        if (!done) {
            done = true;
            (void)::setpriority(PRIO_PROCESS, static_cast<id_t>(::syscall(SYS_gettid)), 10);
        }
#endif
    }
    httplib::ThreadPool pool_;
};
} // namespace detail

/// The console's HTTP server: listening once constructed, stopped by the destructor. Throws ania::error
/// (invalid_config) without a token or with a bad `listen`, (store_error) when it cannot bind.
class console {
public:
    console(console_options opt, api_parts parts) : opt_(std::move(opt)), api_(parts), limiter_(opt_.requests_per_second, opt_.burst) {
        if (opt_.token.empty()) throw error(errc::invalid_config, "admin console: no token: it never runs open");
        const std::size_t colon = opt_.listen.rfind(':');
        if (colon == std::string::npos) throw error(errc::invalid_config, "admin.listen: must be host:port, not " + opt_.listen);
        std::string host = opt_.listen.substr(0, colon);
        if (host.size() >= 2 && host.front() == '[' && host.back() == ']') host = host.substr(1, host.size() - 2);
        int port = 0;
        try {
            port = std::stoi(opt_.listen.substr(colon + 1));
        } catch (const std::exception&) {
            port = -1;
        }
        if (port < 0 || port > 65535) throw error(errc::invalid_config, "admin.listen: bad port in " + opt_.listen);
        log_ = parts.log;
        configure();
        port_ = port == 0 ? server_.bind_to_any_port(host) : (server_.bind_to_port(host, port) ? port : -1);
        if (port_ < 0) throw error(errc::store_error, "admin console: cannot listen on " + opt_.listen);
        thread_ = std::thread([this] {
            server_.listen_after_bind();
            done_ = true;
        });
        // stop() is a no-op until the server runs: a console destroyed at once would wait for ever otherwise.
        while (!server_.is_running() && !done_) std::this_thread::sleep_for(std::chrono::microseconds(200));
        log_to(log_, log_level::info, "admin console on http://" + host + ":" + std::to_string(port_) + "/");
    }
    console(const console&) = delete;
    console& operator=(const console&) = delete;
    ~console() {
        server_.stop();
        if (thread_.joinable()) thread_.join();
    }

    /// The port it listens on (the one the system chose for port 0).
    [[nodiscard]] int port() const noexcept { return port_; }

private:
    void configure() {
        // SO_REUSEADDR (a restart binds past TIME_WAIT) without httplib's SO_REUSEPORT, with which a second
        // process would bind the same port and silently take half of the operator's requests.
        server_.set_socket_options([](socket_t sock) {
            int yes = 1;
            ::setsockopt(sock, SOL_SOCKET, SO_REUSEADDR, reinterpret_cast<const void*>(&yes), sizeof(yes));
        });
        server_.set_tcp_nodelay(true);  // headers and body go in two writes: Nagle would hold the second 40 ms
        server_.set_payload_max_length(opt_.max_body);
        server_.set_read_timeout(std::chrono::seconds(10));
        server_.set_write_timeout(std::chrono::seconds(10));
        // A kept-alive connection holds a worker until it closes: short and few, so that 50 clients take turns
        // on 16 workers instead of 42 of them waiting for the first 8 to finish 100 requests each.
        server_.set_keep_alive_max_count(8);
        server_.set_keep_alive_timeout(1);
        server_.new_task_queue = [] { return new detail::console_workers(16); };
        server_.set_default_headers({{"Content-Security-Policy", page_.csp},
                                     {"X-Content-Type-Options", "nosniff"},
                                     {"X-Frame-Options", "DENY"},
                                     {"Referrer-Policy", "no-referrer"},
                                     {"Cache-Control", "no-store"}});
        server_.set_pre_routing_handler([this](const httplib::Request& req, httplib::Response& res) {
            if (!limiter_.allow(req.remote_addr)) {
                send(res, api::fail(429, "too many requests"));
                return httplib::Server::HandlerResponse::Handled;
            }
            if (req.path.rfind("/api/", 0) != 0) return httplib::Server::HandlerResponse::Unhandled;
            if (!authorized(req)) {
                log_to(log_, log_level::warn, "admin: " + req.remote_addr + " " + req.method + " " + req.path + ": refused (no or wrong token)");
                res.set_header("WWW-Authenticate", "Bearer");
                send(res, api::fail(401, "a bearer token is required"));
                return httplib::Server::HandlerResponse::Handled;
            }
            return httplib::Server::HandlerResponse::Unhandled;
        });
        server_.Get("/", [this](const httplib::Request&, httplib::Response& res) {
            // Through a provider of known length: httplib compresses a plain text/* body for a browser that
            // accepts br, at brotli's highest quality (21-30 ms for this 16 KB page: most of the browser's
            // wait for its first byte, against 1 ms uncompressed), and never a provider's.
            res.set_content_provider(page_.html.size(), "text/html; charset=utf-8",
                                     [this](std::size_t offset, std::size_t length, httplib::DataSink& sink) {
                                         return sink.write(page_.html.data() + offset, length);
                                     });
        });
        server_.Get("/favicon.ico", [](const httplib::Request&, httplib::Response& res) { res.status = 204; });
        const auto serve = [this](const httplib::Request& req, httplib::Response& res) {
            request r;
            r.method = req.method;
            r.path = req.path;
            for (const auto& [k, v] : req.params) r.query.emplace(k, v);
            r.body = req.body;
            r.remote = req.remote_addr;
            const ania::detail::concurrency_limit::held busy(busy_);
            send(res, api_.handle(r));
        };
        server_.Get(R"(/api/.*)", serve);
        server_.Post(R"(/api/.*)", serve);
        server_.Put(R"(/api/.*)", serve);
        server_.Delete(R"(/api/.*)", serve);
        server_.set_error_handler([](const httplib::Request&, httplib::Response& res) {
            if (!res.body.empty()) return;
            if (res.status == 413) send(res, api::fail(413, "the request body is too large"));
            else if (res.status == 404) send(res, api::fail(404, "not found"));
        });
        server_.set_exception_handler([this](const httplib::Request& req, httplib::Response& res, std::exception_ptr ep) {
            std::string what = "internal error";
            try {
                if (ep) std::rethrow_exception(ep);
            } catch (const std::exception& e) {
                what = e.what();
            } catch (...) {
            }
            log_to(log_, log_level::error, "admin: " + req.method + " " + req.path + ": " + what);
            send(res, api::fail(500, what));
        });
    }
    [[nodiscard]] bool authorized(const httplib::Request& req) const {
        const std::string h = req.get_header_value("Authorization");
        constexpr std::string_view scheme = "Bearer ";
        if (h.size() <= scheme.size() || h.compare(0, scheme.size(), scheme) != 0) return false;
        return detail::same_secret(std::string_view(h).substr(scheme.size()), opt_.token);
    }
    static void send(httplib::Response& res, const response& r) {
        res.status = r.status;
        res.set_content(r.body, "application/json; charset=utf-8");
    }

    /// console_options::busy_threads, 0 resolved. On 2 cores with 50 clients listing as fast as they can
    /// (bench/console.cpp), a bot turn took a median 57% longer than idle with every worker busy at once, 22%
    /// with one at a time (docs/console.md).
    static std::size_t busy_width(std::size_t asked) {
        if (asked > 0) return std::min<std::size_t>(asked, 1024);
        const unsigned cores = std::thread::hardware_concurrency();
        return cores > 2 ? cores - 1 : 1;
    }

    console_options opt_;
    ania::detail::concurrency_limit busy_{busy_width(opt_.busy_threads)};
    served_page page_ = served_page::make();
    api api_;
    detail::rate_limiter limiter_;
    log_sink log_;
    httplib::Server server_;
    int port_ = -1;
    std::atomic<bool> done_{false};
    std::thread thread_;
};

namespace detail {
class bot_console final : public running_console {
public:
    bot_console(console_options o, const api_parts& p) : c_(std::move(o), p) {}
    [[nodiscard]] int port() const noexcept override { return c_.port(); }

private:
    console c_;
};
/// Installs the starter a bot calls when `admin.enabled` (admin/starter.hpp): once, at static
/// initialization of the program, in whichever translation unit includes this header first.
inline const bool console_starter_installed = [] {
    installed_console_starter() = [](const config& c, const api_parts& p) -> std::unique_ptr<running_console> {
        console_options o = console_options_from(c);
        o.log = p.log;
        return std::make_unique<bot_console>(std::move(o), p);
    };
    return true;
}();
} // namespace detail

} // namespace ania::admin
