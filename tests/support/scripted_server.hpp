// tests/support/scripted_server.hpp -- a real HTTP server on 127.0.0.1 (cpp-httplib) that answers what a test
// scripts: the model clients are tested against it, over real sockets. SCRIPTED: no model runs here.
#pragma once

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <deque>
#include <functional>
#include <mutex>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include <httplib.h>

#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

namespace ania_test {

/// One received request, as the test later reads it.
struct received {
    std::string path;
    std::string body;
    std::string authorization;
    std::string accept;
    int remote_port = 0;
};

/// Answers POSTs from a queue of scripted handlers, in order; with the queue empty, `fallback` (default: 500).
class scripted_server {
public:
    using handler = std::function<void(const httplib::Request&, httplib::Response&)>;

    scripted_server() {
        srv_.Post(".*", [this](const httplib::Request& req, httplib::Response& res) {
            handler h;
            {
                std::lock_guard lock(mu_);
                seen_.push_back({req.path, record_bodies_ ? req.body : std::string(), req.get_header_value("Authorization"),
                                 req.get_header_value("Accept"), req.remote_port});
                if (!script_.empty()) {
                    h = std::move(script_.front());
                    script_.pop_front();
                } else {
                    h = fallback_;
                }
            }
            if (h) h(req, res);
            else res.status = 500;
        });
        srv_.set_tcp_nodelay(true);  // else Nagle and delayed ACKs add 40 ms to each answer written in two pieces
        port_ = srv_.bind_to_any_port("127.0.0.1");
        if (port_ <= 0) throw std::runtime_error("scripted_server: cannot bind 127.0.0.1");
        thread_ = std::thread([this] { srv_.listen_after_bind(); });
        for (int i = 0; i < 500 && !srv_.is_running(); ++i) std::this_thread::sleep_for(std::chrono::milliseconds(2));
    }
    scripted_server(const scripted_server&) = delete;
    scripted_server& operator=(const scripted_server&) = delete;
    ~scripted_server() {
        release();
        srv_.stop();
        thread_.join();
    }

    [[nodiscard]] std::string url() const { return "http://127.0.0.1:" + std::to_string(port_) + "/v1"; }

    void then(handler h) {
        std::lock_guard lock(mu_);
        script_.push_back(std::move(h));
    }
    void otherwise(handler h) {
        std::lock_guard lock(mu_);
        fallback_ = std::move(h);
    }
    /// Whether requests() holds each request's body (default). A benchmark sending megabytes a call turns it
    /// off: the copies would be the server's main work, and every one of them kept.
    void record_bodies(bool on) {
        std::lock_guard lock(mu_);
        record_bodies_ = on;
    }
    /// A JSON answer with a status.
    void then_json(int status, std::string body, std::vector<std::pair<std::string, std::string>> headers = {}) {
        then([status, body = std::move(body), headers = std::move(headers)](const httplib::Request&, httplib::Response& res) {
            res.status = status;
            for (const auto& [k, v] : headers) res.set_header(k, v);
            res.set_content(body, "application/json");
        });
    }

    /// An event stream (text/event-stream), written in pieces of `piece` bytes. The provider runs after the
    /// handler has returned (and the handler is gone): it holds its own copy of the body.
    void then_stream(std::string body, std::size_t piece = 64, int status = 200) {
        then([body = std::move(body), piece, status](const httplib::Request&, httplib::Response& res) {
            res.status = status;
            res.set_chunked_content_provider("text/event-stream", [body, piece](std::size_t, httplib::DataSink& sink) {
                for (std::size_t i = 0; i < body.size(); i += piece) sink.write(body.data() + i, std::min(piece, body.size() - i));
                sink.done();
                return true;
            });
        });
    }

    [[nodiscard]] std::vector<received> requests() const {
        std::lock_guard lock(mu_);
        return seen_;
    }
    [[nodiscard]] std::size_t count() const {
        std::lock_guard lock(mu_);
        return seen_.size();
    }

    /// For handlers that stall: blocks until release() (or the server goes away) or `max` passes.
    void hold(std::chrono::milliseconds max) {
        std::unique_lock lock(mu_);
        cv_.wait_for(lock, max, [&] { return released_; });
    }
    void release() {
        {
            std::lock_guard lock(mu_);
            released_ = true;
        }
        cv_.notify_all();
    }

private:
    httplib::Server srv_;
    int port_ = 0;
    std::thread thread_;
    mutable std::mutex mu_;
    std::condition_variable cv_;
    bool released_ = false;
    bool record_bodies_ = true;
    std::deque<handler> script_;
    handler fallback_;
    std::vector<received> seen_;
};

/// A TCP server that reads a request, writes `reply` (may be partial HTTP) and resets the connection
/// (SO_LINGER 0): what a crashed proxy looks like. Serves `times` connections, then stops.
class resetting_server {
public:
    explicit resetting_server(std::string reply, int times = 8) : reply_(std::move(reply)) {
        fd_ = ::socket(AF_INET, SOCK_STREAM, 0);
        sockaddr_in a{};
        a.sin_family = AF_INET;
        a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
        a.sin_port = 0;
        if (fd_ < 0 || ::bind(fd_, reinterpret_cast<sockaddr*>(&a), sizeof a) != 0 || ::listen(fd_, 8) != 0)
            throw std::runtime_error("resetting_server: cannot listen");
        socklen_t len = sizeof a;
        ::getsockname(fd_, reinterpret_cast<sockaddr*>(&a), &len);
        port_ = ntohs(a.sin_port);
        thread_ = std::thread([this, times] {
            for (int i = 0; i < times; ++i) {
                const int c = ::accept(fd_, nullptr, nullptr);
                if (c < 0) return;
                char buf[65536];
                (void)::recv(c, buf, sizeof buf, 0);  // the request (enough of it)
                if (!reply_.empty()) (void)::send(c, reply_.data(), reply_.size(), MSG_NOSIGNAL);
                linger l{1, 0};
                ::setsockopt(c, SOL_SOCKET, SO_LINGER, &l, sizeof l);
                ::close(c);
                ++served_;
            }
        });
    }
    resetting_server(const resetting_server&) = delete;
    resetting_server& operator=(const resetting_server&) = delete;
    ~resetting_server() {
        ::shutdown(fd_, SHUT_RDWR);
        ::close(fd_);
        thread_.join();
    }
    [[nodiscard]] std::string url() const { return "http://127.0.0.1:" + std::to_string(port_) + "/v1"; }
    [[nodiscard]] int served() const { return served_.load(); }

private:
    std::string reply_;
    int fd_ = -1;
    int port_ = 0;
    std::atomic<int> served_{0};
    std::thread thread_;
};

} // namespace ania_test
