// ania/http/curl.hpp -- one HTTP POST over libcurl, with the timeouts, cancellation and limits a model call needs.
// SPDX-License-Identifier: MIT
//
// Needs libcurl: use `dependency('ania-openai')` (Meson) or link -lcurl. The clients (<ania/openai/client.hpp>)
// are built on `post`; nothing here knows the protocol.
//
// Why the multi interface for a single transfer: curl_easy_perform checks for cancellation through its
// progress callback, which libcurl may call only once a second when nothing arrives; curl_multi_poll can be
// woken from another thread (curl_multi_wakeup, called by a std::stop_callback), so a stop request aborts a
// transfer at once, and the poll's timeout gives the stall check its resolution.
#pragma once

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstddef>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <exception>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <span>
#include <stop_token>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <curl/curl.h>

namespace ania::http {

struct timeouts {
    std::chrono::milliseconds connect{10'000};  ///< TCP + TLS handshake
    std::chrono::milliseconds total{600'000};   ///< the whole transfer (a long non-streamed answer takes minutes)
    /// No byte for this long once the answer has started (headers in): the server has stalled. 0 disables.
    std::chrono::milliseconds stall{60'000};
};

/// One POST. Everything is borrowed for the call.
struct request {
    std::string_view url;
    std::span<const std::string> headers;  ///< "Name: value" lines (they may hold a key: never logged here)
    std::string_view body;
    /// More of the body, sent after `body` without being copied into one buffer first (a wire_body's
    /// shared history and its tail): curl reads the three pieces through a read callback.
    std::string_view body_shared{};
    std::string_view body_tail{};
    timeouts limits{};
    std::stop_token stop{};
    std::size_t max_body = std::size_t(32) << 20;  ///< a larger answer fails with outcome::too_large
    /// Streaming: called with each piece of a 2xx body as it arrives (the body is not kept then); false aborts.
    std::function<bool(std::string_view)> on_data{};
};

enum class outcome : std::uint8_t {
    done,       ///< an HTTP answer arrived (any status)
    network,    ///< could not connect, reset, TLS, DNS
    timeout,    ///< connect or total timeout
    stalled,    ///< timeouts::stall passed without a byte
    cancelled,  ///< the stop token was requested
    too_large,  ///< the body passed request::max_body
    aborted,    ///< request::on_data returned false
};

struct response {
    outcome result = outcome::network;
    long status = 0;
    std::string body;                                 ///< the body (a non-2xx body even when streaming)
    std::optional<std::chrono::milliseconds> retry_after;  ///< Retry-After / retry-after-ms, when sent
    std::string error;                                ///< curl's text for network and timeout results
    std::size_t bytes = 0;                            ///< body bytes received
};

namespace detail {

inline void curl_global() {
    static const bool once = [] { return curl_global_init(CURL_GLOBAL_DEFAULT) == CURLE_OK; }();
    (void)once;
}

struct curl_handles {
    CURL* easy = nullptr;
    CURLM* multi = nullptr;
    curl_handles() : easy(curl_easy_init()), multi(curl_multi_init()) {}
    curl_handles(const curl_handles&) = delete;
    curl_handles& operator=(const curl_handles&) = delete;
    ~curl_handles() {
        if (easy) curl_easy_cleanup(easy);
        if (multi) curl_multi_cleanup(multi);
    }
};

/// `Retry-After: <seconds>` or an HTTP date, or OpenAI's `retry-after-ms`.
[[nodiscard]] inline std::optional<std::chrono::milliseconds> parse_retry_after(std::string_view name, std::string_view v) {
    while (!v.empty() && (v.front() == ' ' || v.front() == '\t')) v.remove_prefix(1);
    while (!v.empty() && (v.back() == ' ' || v.back() == '\t' || v.back() == '\r' || v.back() == '\n')) v.remove_suffix(1);
    if (v.empty() || v.size() > 64) return std::nullopt;
    const bool ms = name.size() == 14;  // "retry-after-ms"
    const std::string s(v);
    char* end = nullptr;
    const double x = std::strtod(s.c_str(), &end);
    if (end && *end == '\0' && x >= 0 && x < 1e9) return std::chrono::milliseconds(static_cast<std::int64_t>(ms ? x : x * 1000));
    if (ms) return std::nullopt;
    const std::time_t at = curl_getdate(s.c_str(), nullptr);
    if (at < 0) return std::nullopt;
    const std::time_t now = std::time(nullptr);
    return std::chrono::milliseconds(at > now ? static_cast<std::int64_t>(at - now) * 1000 : 0);
}

[[nodiscard]] inline bool header_is(std::string_view line, std::string_view name) {
    if (line.size() <= name.size() || line[name.size()] != ':') return false;
    for (std::size_t i = 0; i < name.size(); ++i) {
        char c = line[i];
        if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
        if (c != name[i]) return false;
    }
    return true;
}

struct transfer {
    const request* req;
    response* res;
    std::chrono::steady_clock::time_point last_byte;
    bool started = false;  ///< the status line is in
    bool streaming = false;
    bool too_large = false;
    bool aborted = false;
    /// What on_data threw (an accumulator, a user's on_text): kept here and rethrown by post() after curl has
    /// returned, since an exception must not unwind through libcurl's C frames.
    std::exception_ptr thrown{};

    static std::size_t on_header(char* p, std::size_t size, std::size_t n, void* self) noexcept {
        auto& t = *static_cast<transfer*>(self);
        const std::string_view line(p, size * n);
        t.last_byte = std::chrono::steady_clock::now();
        t.started = true;
        try {
            if (line.starts_with("HTTP/")) {  // a new response (after a 100 Continue or a redirect): forget the last
                t.res->retry_after.reset();
            } else if (header_is(line, "retry-after-ms")) {
                if (auto v = parse_retry_after("retry-after-ms", line.substr(15))) t.res->retry_after = v;
            } else if (header_is(line, "retry-after") && !t.res->retry_after) {
                t.res->retry_after = parse_retry_after("retry-after", line.substr(12));
            }
        } catch (...) {  // std::bad_alloc
            t.thrown = std::current_exception();
            return 0;
        }
        return size * n;
    }

    static std::size_t on_body(char* p, std::size_t size, std::size_t n, void* self) noexcept {
        auto& t = *static_cast<transfer*>(self);
        const std::size_t len = size * n;
        t.last_byte = std::chrono::steady_clock::now();
        if (t.res->bytes == 0) {
            long status = 0;
            curl_easy_getinfo(t.easy, CURLINFO_RESPONSE_CODE, &status);
            t.streaming = t.req->on_data && status >= 200 && status < 300;
        }
        t.res->bytes += len;
        if (t.res->bytes > t.req->max_body) {
            t.too_large = true;
            return 0;  // anything but len aborts the transfer
        }
        try {
            if (t.streaming) {
                if (!t.req->on_data(std::string_view(p, len))) {
                    t.aborted = true;
                    return 0;
                }
            } else {
                t.res->body.append(p, len);
            }
        } catch (...) {
            t.thrown = std::current_exception();
            t.aborted = true;
            return 0;
        }
        return len;
    }

    CURL* easy = nullptr;
};

/// The body pieces as curl reads them (CURLOPT_READFUNCTION), rewound on curl's request (a redirect, an auth
/// round) through CURLOPT_SEEKFUNCTION.
struct body_reader {
    std::string_view piece[3];
    std::size_t k = 0, off = 0;

    [[nodiscard]] std::size_t total() const noexcept { return piece[0].size() + piece[1].size() + piece[2].size(); }
    static std::size_t on_read(char* buf, std::size_t size, std::size_t n, void* self) noexcept {
        auto& r = *static_cast<body_reader*>(self);
        std::size_t room = size * n, done = 0;
        while (room > 0 && r.k < 3) {
            const std::string_view p = r.piece[r.k];
            const std::size_t take = std::min(room, p.size() - r.off);
            if (take > 0) std::memcpy(buf + done, p.data() + r.off, take);  // an empty piece may have no data()
            done += take;
            room -= take;
            r.off += take;
            if (r.off == p.size()) {
                ++r.k;
                r.off = 0;
            }
        }
        return done;
    }
    static int on_seek(void* self, curl_off_t offset, int origin) noexcept {
        auto& r = *static_cast<body_reader*>(self);
        if (origin != SEEK_SET || offset < 0) return CURL_SEEKFUNC_CANTSEEK;
        auto left = static_cast<std::size_t>(offset);
        r.k = 0;
        while (r.k < 3 && left >= r.piece[r.k].size()) left -= r.piece[r.k++].size();
        r.off = r.k < 3 ? left : 0;
        return left == 0 || r.k < 3 ? CURL_SEEKFUNC_OK : CURL_SEEKFUNC_FAIL;
    }
};

} // namespace detail

/// A pool of curl handles: a call takes one (or makes one) and gives it back, so concurrent calls never share
/// a handle, and sequential ones reuse its connection (keep-alive). Thread-safe.
class handle_pool {
public:
    handle_pool() { detail::curl_global(); }
    handle_pool(const handle_pool&) = delete;
    handle_pool& operator=(const handle_pool&) = delete;

    struct lease {
        handle_pool* pool;
        std::unique_ptr<detail::curl_handles> h;
        lease(handle_pool* p, std::unique_ptr<detail::curl_handles> x) : pool(p), h(std::move(x)) {}
        lease(const lease&) = delete;
        lease& operator=(const lease&) = delete;
        ~lease() {
            if (h) pool->give_back(std::move(h));
        }
    };

    [[nodiscard]] lease take() {
        {
            std::lock_guard lock(mu_);
            if (!free_.empty()) {
                auto h = std::move(free_.back());
                free_.pop_back();
                return {this, std::move(h)};
            }
        }
        return {this, std::make_unique<detail::curl_handles>()};
    }

    [[nodiscard]] std::size_t idle() const {
        std::lock_guard lock(mu_);
        return free_.size();
    }

private:
    void give_back(std::unique_ptr<detail::curl_handles> h) {
        std::lock_guard lock(mu_);
        if (free_.size() < 16) free_.push_back(std::move(h));
    }

    mutable std::mutex mu_;
    std::vector<std::unique_ptr<detail::curl_handles>> free_;
};

/// POSTs `req.body` to `req.url`. Never throws for a network or protocol problem: see response::result.
[[nodiscard]] inline response post(handle_pool& pool, const request& req) {
    response res;
    auto lease = pool.take();
    CURL* e = lease.h->easy;
    CURLM* m = lease.h->multi;
    if (!e || !m) {
        res.error = "curl could not be initialised";
        return res;
    }
    if (req.stop.stop_requested()) {
        res.result = outcome::cancelled;
        return res;
    }
    curl_easy_reset(e);  // keeps the connection cache: the next call to the same host reuses the connection
    detail::transfer t{&req, &res, std::chrono::steady_clock::now()};
    t.easy = e;
    char errbuf[CURL_ERROR_SIZE] = {};
    curl_slist* hdrs = nullptr;
    for (const std::string& h : req.headers) hdrs = curl_slist_append(hdrs, h.c_str());
    hdrs = curl_slist_append(hdrs, "Expect:");  // no 100-continue round trip for large bodies
    const std::string url(req.url);
    curl_easy_setopt(e, CURLOPT_URL, url.c_str());
    curl_easy_setopt(e, CURLOPT_POST, 1L);
    detail::body_reader reader{{req.body, req.body_shared, req.body_tail}};
    if (req.body_shared.empty() && req.body_tail.empty()) {
        curl_easy_setopt(e, CURLOPT_POSTFIELDS, req.body.data());
    } else {
        curl_easy_setopt(e, CURLOPT_READFUNCTION, &detail::body_reader::on_read);
        curl_easy_setopt(e, CURLOPT_READDATA, &reader);
        curl_easy_setopt(e, CURLOPT_SEEKFUNCTION, &detail::body_reader::on_seek);
        curl_easy_setopt(e, CURLOPT_SEEKDATA, &reader);
        curl_easy_setopt(e, CURLOPT_UPLOAD_BUFFERSIZE, 512L * 1024);  // fewer, larger writes for a long history
    }
    curl_easy_setopt(e, CURLOPT_POSTFIELDSIZE_LARGE, static_cast<curl_off_t>(reader.total()));
    curl_easy_setopt(e, CURLOPT_HTTPHEADER, hdrs);
    curl_easy_setopt(e, CURLOPT_WRITEFUNCTION, &detail::transfer::on_body);
    curl_easy_setopt(e, CURLOPT_WRITEDATA, &t);
    curl_easy_setopt(e, CURLOPT_HEADERFUNCTION, &detail::transfer::on_header);
    curl_easy_setopt(e, CURLOPT_HEADERDATA, &t);
    curl_easy_setopt(e, CURLOPT_ERRORBUFFER, errbuf);
    curl_easy_setopt(e, CURLOPT_NOSIGNAL, 1L);
    curl_easy_setopt(e, CURLOPT_CONNECTTIMEOUT_MS, static_cast<long>(req.limits.connect.count()));
    curl_easy_setopt(e, CURLOPT_TIMEOUT_MS, static_cast<long>(req.limits.total.count()));
    curl_easy_setopt(e, CURLOPT_ACCEPT_ENCODING, "");  // whatever this curl decodes
    curl_easy_setopt(e, CURLOPT_TCP_KEEPALIVE, 1L);
#if LIBCURL_VERSION_NUM >= 0x075500  // 7.85: CURLOPT_PROTOCOLS_STR; before it, the bitmask form
    curl_easy_setopt(e, CURLOPT_PROTOCOLS_STR, "http,https");
#else
    curl_easy_setopt(e, CURLOPT_PROTOCOLS, static_cast<long>(CURLPROTO_HTTP | CURLPROTO_HTTPS));
#endif
    curl_multi_add_handle(m, e);

    bool cancelled = false, stalled = false;
    {
        std::stop_callback wake(req.stop, [m] { curl_multi_wakeup(m); });
        int running = 1;
        while (true) {
            if (curl_multi_perform(m, &running) != CURLM_OK || running == 0) break;
            if (req.stop.stop_requested()) {
                cancelled = true;
                break;
            }
            if (req.limits.stall.count() > 0 && t.started &&
                std::chrono::steady_clock::now() - t.last_byte > req.limits.stall) {
                stalled = true;
                break;
            }
            curl_multi_poll(m, nullptr, 0, 50, nullptr);  // woken by data, by the stop callback, or after 50 ms
        }
    }
    CURLcode code = CURLE_OK;
    int left = 0;
    while (CURLMsg* msg = curl_multi_info_read(m, &left))
        if (msg->msg == CURLMSG_DONE && msg->easy_handle == e) code = msg->data.result;
    curl_easy_getinfo(e, CURLINFO_RESPONSE_CODE, &res.status);
    curl_multi_remove_handle(m, e);
    curl_easy_setopt(e, CURLOPT_ERRORBUFFER, nullptr);  // both are this frame's: the handle outlives it
    curl_easy_setopt(e, CURLOPT_HTTPHEADER, nullptr);
    curl_slist_free_all(hdrs);
    if (t.thrown) std::rethrow_exception(t.thrown);

    if (cancelled) res.result = outcome::cancelled;
    else if (stalled) res.result = outcome::stalled;
    else if (t.too_large) res.result = outcome::too_large;
    else if (t.aborted) res.result = outcome::aborted;
    else if (code == CURLE_OK) res.result = outcome::done;
    else if (code == CURLE_OPERATION_TIMEDOUT) res.result = outcome::timeout;
    else res.result = outcome::network;
    if (res.result == outcome::network || res.result == outcome::timeout)
        res.error = errbuf[0] ? std::string(errbuf) : std::string(curl_easy_strerror(code));
    return res;
}

} // namespace ania::http
