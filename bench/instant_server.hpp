// bench/instant_server.hpp -- the benchmarks' model endpoint: a SCRIPTED HTTP/1.1 server on 127.0.0.1 that reads
// each request whole (head, then Content-Length bytes of body, in 1 MB reads, not looked at) and answers it at
// once with one fixed JSON reply, keeping the connection. It stands for a model that answers instantly, so a
// benchmark of the client measures the client and the socket, not the test server: cpp-httplib (Debian's is a
// compiled library, its reads fixed at 4 KB) spent more time taking in a 2.7 MB request than the client took to
// send it (agent_turn/with_client/10k: 10.1 ms against 3.7 ms once its copy of each body was gone).
// One connection at a time: the benchmarks that use it have one client.
#pragma once

#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cstddef>
#include <cstdlib>
#include <mutex>
#include <stdexcept>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

namespace ania_bench {

class instant_server {
public:
    explicit instant_server(std::string json_body) {
        reply_ = "HTTP/1.1 200 OK\r\nContent-Type: application/json; charset=utf-8\r\nContent-Length: " +
                 std::to_string(json_body.size()) + "\r\n\r\n" + json_body;
        fd_ = ::socket(AF_INET, SOCK_STREAM, 0);
        sockaddr_in a{};
        a.sin_family = AF_INET;
        a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
        socklen_t len = sizeof a;
        if (fd_ < 0 || ::bind(fd_, reinterpret_cast<sockaddr*>(&a), sizeof a) != 0 || ::listen(fd_, 8) != 0 ||
            ::getsockname(fd_, reinterpret_cast<sockaddr*>(&a), &len) != 0)
            throw std::runtime_error("instant_server: cannot listen on 127.0.0.1");
        port_ = ntohs(a.sin_port);
        thread_ = std::thread([this] { serve(); });
    }
    instant_server(const instant_server&) = delete;
    instant_server& operator=(const instant_server&) = delete;
    ~instant_server() {
        stopping_ = true;
        ::shutdown(fd_, SHUT_RDWR);  // wakes accept()
        {
            std::lock_guard lock(conn_m_);  // the connection is not closed meanwhile
            if (conn_ >= 0) ::shutdown(conn_, SHUT_RDWR);  // wakes recv()
        }
        thread_.join();
        ::close(fd_);
    }

    [[nodiscard]] std::string url() const { return "http://127.0.0.1:" + std::to_string(port_) + "/v1"; }
    /// Requests answered so far.
    [[nodiscard]] std::size_t answered() const { return answered_.load(); }

private:
    void serve() {
        std::vector<char> buf(std::size_t(1) << 20);
        while (!stopping_) {
            const int c = ::accept(fd_, nullptr, nullptr);
            if (c < 0) return;
            const int one = 1;
            ::setsockopt(c, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
            {
                std::lock_guard lock(conn_m_);
                conn_ = c;
            }
            std::string head;  // what came after the last request: the start of the next one
            while (!stopping_ && answer_one(c, buf, head)) {
            }
            std::lock_guard lock(conn_m_);
            conn_ = -1;
            ::close(c);
        }
    }

    /// Reads one request (its head into `head`, its body counted and dropped) and answers it. False when the
    /// peer closed or sent what this server does not take (no Content-Length: no chunked uploads here).
    bool answer_one(int c, std::vector<char>& buf, std::string& head) {
        std::size_t end;
        while ((end = head.find("\r\n\r\n")) == std::string::npos) {
            const ssize_t n = ::recv(c, buf.data(), buf.size(), 0);
            if (n <= 0) return false;
            head.append(buf.data(), static_cast<std::size_t>(n));
        }
        std::size_t length = 0;
        for (std::size_t at = 0; at < end;) {
            const std::size_t eol = head.find("\r\n", at);
            std::string_view line(head.data() + at, eol - at);
            constexpr std::string_view key = "content-length:";
            if (line.size() > key.size() && std::equal(key.begin(), key.end(), line.begin(), [](char k, char ch) {
                    return k == (ch >= 'A' && ch <= 'Z' ? static_cast<char>(ch + 32) : ch);
                }))
                length = std::strtoull(std::string(line.substr(key.size())).c_str(), nullptr, 10);
            at = eol + 2;
        }
        const std::size_t have = head.size() - (end + 4);  // body bytes that came with the head
        std::size_t left = length > have ? length - have : 0;
        head.erase(0, end + 4 + std::min(have, length));
        while (left > 0) {
            const ssize_t n = ::recv(c, buf.data(), std::min(left, buf.size()), 0);
            if (n <= 0) return false;
            left -= static_cast<std::size_t>(n);
        }
        for (std::size_t sent = 0; sent < reply_.size();) {
            const ssize_t n = ::send(c, reply_.data() + sent, reply_.size() - sent, MSG_NOSIGNAL);
            if (n <= 0) return false;
            sent += static_cast<std::size_t>(n);
        }
        ++answered_;
        return true;
    }

    std::string reply_;
    int fd_ = -1;
    int port_ = 0;
    std::mutex conn_m_;
    int conn_ = -1;  // the connection being served, under conn_m_
    std::atomic<bool> stopping_{false};
    std::atomic<std::size_t> answered_{0};
    std::thread thread_;
};

} // namespace ania_bench
