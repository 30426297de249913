// tests/unit/clients.cpp -- the model clients (OpenAI-compatible chat and embeddings, Anthropic Messages)
// against a real HTTP server on 127.0.0.1 that the test starts and SCRIPTS (no model runs here): streaming at every split, retries, timeouts,
// cancellation, bad answers, the key kept out of every text; the SSE decoder and stream accumulator alone.
#include <catch2/catch.hpp>

#include <atomic>
#include <chrono>
#include <cstring>
#include <memory>
#include <optional>
#include <random>
#include <stop_token>
#include <string>
#include <thread>
#include <vector>

#include <ania/ania.hpp>
#include <ania/config/clients.hpp>
#include <ania/openai/client.hpp>
#include <ania/openai/embedder.hpp>

#include "scripted_server.hpp"

using ania::json;
using ania::message;
using ania_test::scripted_server;
using namespace std::chrono_literals;

namespace {

constexpr const char* key = "sk-test-SECRET-0123456789";

/// A stream as providers send it: a role chunk, reasoning, content split inside a multi-byte character's
/// neighbourhood, two tool calls whose arguments arrive in pieces by index, finish_reason, a usage-only
/// last chunk (include_usage), a comment line, and [DONE].
const std::string recorded_stream =
    ": keep-alive\n\n"
    "data: {\"id\":\"c1\",\"choices\":[{\"index\":0,\"delta\":{\"role\":\"assistant\",\"content\":\"\"},\"finish_reason\":null}]}\n\n"
    "data: {\"id\":\"c1\",\"choices\":[{\"index\":0,\"delta\":{\"reasoning_content\":\"想一想\"}}]}\n\n"
    "data: {\"id\":\"c1\",\"choices\":[{\"index\":0,\"delta\":{\"content\":\"你好，\"}}]}\r\n\r\n"
    "data: {\"id\":\"c1\",\"choices\":[{\"index\":0,\"delta\":{\"content\":\"世界\"}}]}\n\n"
    "data: {\"id\":\"c1\",\"choices\":[{\"index\":0,\"delta\":{\"tool_calls\":[{\"index\":0,\"id\":\"call_a\",\"type\":\"function\",\"function\":{\"name\":\"memory_search\",\"arguments\":\"{\\\"que\"}}]}}]}\n\n"
    "data: {\"id\":\"c1\",\"choices\":[{\"index\":0,\"delta\":{\"tool_calls\":[{\"index\":1,\"id\":\"call_b\",\"type\":\"function\",\"function\":{\"name\":\"echo\",\"arguments\":\"\"}}]}}]}\n\n"
    "data: {\"id\":\"c1\",\"choices\":[{\"index\":0,\"delta\":{\"tool_calls\":[{\"index\":0,\"function\":{\"arguments\":\"ry\\\":\\\"猫\\\"}\"}}]}}]}\n\n"
    "data: {\"id\":\"c1\",\"choices\":[{\"index\":0,\"delta\":{\"tool_calls\":[{\"index\":1,\"function\":{\"arguments\":\"{}\"}}]}}]}\n\n"
    "data: {\"id\":\"c1\",\"choices\":[{\"index\":0,\"delta\":{},\"finish_reason\":\"tool_calls\"}]}\n\n"
    "data: {\"id\":\"c1\",\"choices\":[],\"usage\":{\"prompt_tokens\":321,\"completion_tokens\":45,\"total_tokens\":366}}\n\n"
    "data: [DONE]\n\n";

void check_recorded(const ania::completion& c) {
    REQUIRE(c.ok);
    CHECK(c.reply.role == ania::role::assistant);
    CHECK(c.reply.content == "你好，世界");
    CHECK(c.reply.reasoning_content == std::optional<std::string>("想一想"));
    REQUIRE(c.reply.tool_calls.size() == 2);
    CHECK(c.reply.tool_calls[0].id == "call_a");
    CHECK(c.reply.tool_calls[0].name == "memory_search");
    CHECK(c.reply.tool_calls[0].arguments == "{\"query\":\"猫\"}");
    CHECK(c.reply.tool_calls[1].id == "call_b");
    CHECK(c.reply.tool_calls[1].arguments == "{}");
    CHECK(c.finish_reason == "tool_calls");
    CHECK(c.used.prompt_tokens == std::optional<std::int64_t>(321));
    CHECK(c.used.completion_tokens == std::optional<std::int64_t>(45));
}

ania::completion decode(std::string_view stream, std::size_t split) {
    ania::openai::stream_accumulator acc;
    ania::http::sse_decoder sse;
    const auto on = [&](const ania::http::sse_event& e) { acc.add(e.data); };
    sse.feed(stream.substr(0, split), on);
    sse.feed(stream.substr(split), on);
    sse.finish(on);
    return std::move(acc).finish();
}

std::string answer(std::string_view content, std::string_view usage = R"(,"usage":{"prompt_tokens":10,"completion_tokens":2,"total_tokens":12})") {
    return R"({"id":"x","choices":[{"index":0,"message":{"role":"assistant","content":)" + json(std::string(content)).dump() +
           R"(},"finish_reason":"stop"}])" + std::string(usage) + "}";
}

struct capture_log {
    std::shared_ptr<std::vector<std::string>> lines = std::make_shared<std::vector<std::string>>();
    std::shared_ptr<std::mutex> mu = std::make_shared<std::mutex>();
    void operator()(ania::log_level, std::string_view t) const {
        std::lock_guard lock(*mu);
        lines->emplace_back(t);
    }
};

ania::openai::client_options options(const scripted_server& s, capture_log log = {}) {
    ania::openai::client_options o;
    o.base_url = s.url();
    o.api_key = key;
    o.model = "test-model";
    o.retry.initial = 20ms;
    o.retry.max_wait = 100ms;
    o.log = log;
    return o;
}

ania::chat_request one_user(const std::vector<message>& msgs, std::stop_token stop = {}) {
    return {ania::message_sequence(std::span<const message>(msgs)), {}, std::move(stop)};
}

} // namespace

TEST_CASE("sse: the recorded stream decodes the same at every split and byte by byte", "[openai][sse]") {
    for (std::size_t k = 0; k <= recorded_stream.size(); ++k) {
        INFO("split at " << k);
        check_recorded(decode(recorded_stream, k));
    }
    ania::openai::stream_accumulator acc;
    ania::http::sse_decoder sse;
    std::string texts;
    acc.on_text([&](std::string_view t) { texts += t; });
    for (const char c : recorded_stream) sse.feed(std::string_view(&c, 1), [&](const ania::http::sse_event& e) { acc.add(e.data); });
    CHECK(acc.done());
    CHECK(texts == "你好，世界");
    check_recorded(std::move(acc).finish());
}

TEST_CASE("sse: line ends, comments, multi-line data, fields without a value", "[openai][sse]") {
    std::vector<std::string> got;
    ania::http::sse_decoder sse;
    const auto on = [&](const ania::http::sse_event& e) { got.emplace_back(std::string(e.event) + "|" + std::string(e.data)); };
    sse.feed("data: a\rdata:b\r\n\r:comment\nevent: x\ndata\n\ndata: last", on);
    REQUIRE(got.size() == 2);
    CHECK(got[0] == "|a\nb");
    CHECK(got[1] == "x|");
    sse.finish(on);  // an unterminated last event is kept (some servers omit the blank line)
    REQUIRE(got.size() == 3);
    CHECK(got[2] == "|last");
    // A \r\n split between two reads is one line end, not a line end and a blank line (which would cut
    // the event in two).
    got.clear();
    ania::http::sse_decoder crlf;
    crlf.feed("data: a\r", on);
    crlf.feed("\ndata: b\r\n\r\n", on);
    REQUIRE(got.size() == 1);
    CHECK(got[0] == "|a\nb");
    // A line past the cap fails the stream instead of growing.
    ania::http::sse_decoder small(16);
    CHECK_FALSE(small.feed(std::string(17, 'x'), on));
    CHECK_FALSE(small.feed("\n\n", on));
}

TEST_CASE("stream accumulator: an error chunk, garbage, and a stream without a choice fail with a reason", "[openai][sse]") {
    {
        ania::openai::stream_accumulator acc;
        CHECK(acc.add(R"({"choices":[{"index":0,"delta":{"content":"half"}}]})"));
        CHECK_FALSE(acc.add(R"({"error":{"message":"overloaded","type":"server_error"}})"));
        const ania::completion c = std::move(acc).finish();
        CHECK_FALSE(c.ok);
        CHECK(c.error.find("overloaded") != std::string::npos);
    }
    {
        ania::openai::stream_accumulator acc;
        CHECK_FALSE(acc.add("{not json"));
        CHECK(std::move(acc).finish().cause.kind == ania::failure_kind::malformed);
    }
    {
        ania::openai::stream_accumulator acc;
        CHECK(acc.add("[DONE]"));
        CHECK(std::move(acc).finish().cause.kind == ania::failure_kind::malformed);
    }
}

TEST_CASE("stream accumulator: 80,000 tool calls by index stay linear, sparse indices included", "[openai][sse][dos]") {
    ania::openai::stream_accumulator acc;
    constexpr int n = 80'000;
    for (int i = 0; i < n; ++i) {
        const int index = i * 7 % n;  // not in order: every lookup misses the last-call fast path
        acc.add(R"({"choices":[{"index":0,"delta":{"tool_calls":[{"index":)" + std::to_string(index) + R"(,"id":"c)" +
                std::to_string(index) + R"(","function":{"name":"t","arguments":"{}"}}]}}]})");
    }
    const ania::completion c = std::move(acc).finish();
    REQUIRE(c.ok);
    CHECK(c.reply.tool_calls.size() == static_cast<std::size_t>(n));
}

TEST_CASE("request body: model, messages, tools, stream switches and extra members", "[openai]") {
    const std::vector<message> msgs{message::system("s"), message::user("hi")};
    const ania::tool t{"echo", "echoes", json{{"type", "object"}}, [](std::string_view) { return std::string(); }};
    ania::openai::body_options o;
    o.model = "m";
    o.stream = true;
    o.extra = {{"temperature", 0.5}, {"tool_choice", "auto"}, {"model", "not this"}, {"parallel_tool_calls", false}};
    const std::string body = ania::openai::request_body({ania::message_sequence(std::span<const message>(msgs)), std::span(&t, 1), {}}, o);
    const json j = json::parse(body);
    CHECK(j["model"] == "m");
    CHECK(j["messages"].size() == 2);
    CHECK(j["tools"][0]["function"]["name"] == "echo");
    CHECK(j["stream"] == true);
    CHECK(j["stream_options"]["include_usage"] == true);
    CHECK(j["temperature"] == 0.5);
    CHECK(j["tool_choice"] == "auto");
    CHECK(j["parallel_tool_calls"] == false);
}

TEST_CASE("client: a plain answer with usage, and one without", "[openai]") {
    scripted_server s;
    s.then_json(200, answer("你好"));
    s.then_json(200, answer("again", ""));
    ania::openai::client llm(options(s));
    const std::vector<message> msgs{message::user("hi")};
    const ania::completion a = llm.complete(one_user(msgs));
    REQUIRE(a.ok);
    CHECK(a.reply.content == "你好");
    CHECK(a.finish_reason == "stop");
    CHECK(a.used.prompt_tokens == std::optional<std::int64_t>(10));
    const ania::completion b = llm.complete(one_user(msgs));
    REQUIRE(b.ok);
    CHECK(b.used.empty());
    const auto reqs = s.requests();
    REQUIRE(reqs.size() == 2);
    CHECK(reqs[0].path == "/v1/chat/completions");
    CHECK(reqs[0].authorization == std::string("Bearer ") + key);
    CHECK(json::parse(reqs[0].body)["model"] == "test-model");
    CHECK(reqs[0].remote_port == reqs[1].remote_port);  // one connection, kept alive
}

TEST_CASE("client: the recorded stream served split at every byte offset", "[openai][sse]") {
    scripted_server s;
    std::atomic<std::size_t> split{0};
    s.otherwise([&](const httplib::Request&, httplib::Response& res) {
        const std::size_t k = split.load();
        res.set_chunked_content_provider("text/event-stream", [k](std::size_t, httplib::DataSink& sink) {
            if (k > 0) sink.write(recorded_stream.data(), k);
            if (k < recorded_stream.size()) sink.write(recorded_stream.data() + k, recorded_stream.size() - k);
            sink.done();
            return true;
        });
    });
    auto o = options(s);
    o.stream = true;
    std::string texts;
    o.on_text = [&](std::string_view t) { texts += t; };
    ania::openai::client llm(o);
    const std::vector<message> msgs{message::user("hi")};
    for (std::size_t k = 0; k <= recorded_stream.size(); ++k) {
        INFO("split at " << k);
        split = k;
        texts.clear();
        check_recorded(llm.complete(one_user(msgs)));
        CHECK(texts == "你好，世界");
    }
    const auto reqs = s.requests();
    CHECK(reqs.front().accept == "text/event-stream");
    CHECK(json::parse(reqs.front().body)["stream_options"]["include_usage"] == true);
}

TEST_CASE("client: an exception from on_text reaches the caller of complete(), not through libcurl; the client goes on", "[openai][sse]") {
    // The stream's callbacks run inside libcurl's C frames, where unwinding is undefined (it ended the process
    // when an accumulator threw). The transport keeps the exception and rethrows it once curl has returned.
    scripted_server s;
    s.otherwise([&](const httplib::Request&, httplib::Response& res) {
        res.set_chunked_content_provider("text/event-stream", [](std::size_t, httplib::DataSink& sink) {
            sink.write(recorded_stream.data(), recorded_stream.size());
            sink.done();
            return true;
        });
    });
    auto o = options(s);
    o.stream = true;
    int calls = 0;
    o.on_text = [&](std::string_view) {
        if (++calls == 1) throw std::runtime_error("the UI is gone");
    };
    ania::openai::client llm(o);
    const std::vector<message> msgs{message::user("hi")};
    CHECK_THROWS_WITH(llm.complete(one_user(msgs)), "the UI is gone");
    check_recorded(llm.complete(one_user(msgs)));  // the pooled handle still works
    CHECK(s.requests().size() == 2);
}

TEST_CASE("client: 400, 401, 403 are not retried; the key never appears in an error or a log line", "[openai][errors]") {
    capture_log log;
    for (const int status : {400, 401, 403}) {
        scripted_server s;
        // A server that echoes the key back (some do, in "incorrect API key" errors).
        s.then_json(status, std::string(R"({"error":{"message":"Incorrect API key provided: )") + key +
                                R"(","type":"invalid_request_error","code":"invalid_api_key"}})");
        ania::openai::client llm(options(s, log));
        const std::vector<message> msgs{message::user("hi")};
        const ania::completion c = llm.complete(one_user(msgs));
        CHECK_FALSE(c.ok);
        CHECK(c.cause.http_status == status);
        CHECK(c.cause.kind == (status == 400 ? ania::failure_kind::bad_request : ania::failure_kind::auth));
        CHECK_FALSE(c.cause.retryable);
        CHECK(c.cause.attempts == 1);
        CHECK(c.cause.code == "invalid_api_key");
        CHECK(s.count() == 1);
        CHECK(c.error.find(key) == std::string::npos);
        CHECK(c.error.find("[redacted]") != std::string::npos);
    }
    for (const auto& l : *log.lines) CHECK(l.find(key) == std::string::npos);
}

TEST_CASE("client: 429 with Retry-After, 500 and 503 are retried, then succeed", "[openai][errors]") {
    capture_log log;
    scripted_server s;
    s.then_json(429, R"({"error":{"message":"slow down","type":"rate_limit"}})", {{"retry-after-ms", "150"}});
    s.then_json(500, R"({"error":{"message":"oops"}})");
    s.then_json(503, "<html>unavailable</html>");
    s.then_json(200, answer("finally"));
    auto o = options(s, log);
    o.retry.max_retries = 3;
    ania::openai::client llm(o);
    const std::vector<message> msgs{message::user("hi")};
    const auto t0 = std::chrono::steady_clock::now();
    const ania::completion c = llm.complete(one_user(msgs));
    const auto took = std::chrono::steady_clock::now() - t0;
    REQUIRE(c.ok);
    CHECK(c.reply.content == "finally");
    CHECK(c.cause.attempts == 4);
    CHECK(s.count() == 4);
    CHECK(took >= 150ms);  // the server's Retry-After was honoured over the 20 ms back-off
    CHECK(log.lines->size() == 3);  // one warning per retry
    for (const auto& l : *log.lines) CHECK(l.find(key) == std::string::npos);

    // Retries spent: the last failure is returned, typed.
    scripted_server s2;
    s2.otherwise([](const httplib::Request&, httplib::Response& res) {
        res.status = 429;
        res.set_header("Retry-After", "0");
        res.set_content(R"({"error":{"message":"no"}})", "application/json");
    });
    auto o2 = options(s2);
    o2.retry.max_retries = 2;
    ania::openai::client llm2(o2);
    const ania::completion d = llm2.complete(one_user(msgs));
    CHECK_FALSE(d.ok);
    CHECK(d.cause.kind == ania::failure_kind::rate_limited);
    CHECK(d.cause.retryable);
    CHECK(d.cause.attempts == 3);
    CHECK(s2.count() == 3);
}

TEST_CASE("client: a Retry-After longer than the budget ends the retries at once", "[openai][errors]") {
    scripted_server s;
    s.otherwise([](const httplib::Request&, httplib::Response& res) {
        res.status = 503;
        res.set_header("Retry-After", "3600");
    });
    auto o = options(s);
    o.retry.max_retries = 5;
    o.retry.budget = 2s;
    ania::openai::client llm(o);
    const std::vector<message> msgs{message::user("hi")};
    const ania::completion c = llm.complete(one_user(msgs));
    CHECK_FALSE(c.ok);
    CHECK(c.cause.kind == ania::failure_kind::server);
    CHECK(s.count() == 1);
    CHECK(c.error.find("budget") != std::string::npos);
}

TEST_CASE("client: context length exceeded is its own reason (OpenAI code, DeepSeek and Anthropic wording)", "[openai][errors]") {
    const char* bodies[] = {
        R"({"error":{"message":"too long","type":"invalid_request_error","code":"context_length_exceeded"}})",
        R"({"error":{"message":"This model's maximum context length is 65536 tokens. However, you requested 70000 tokens.","type":"invalid_request_error"}})",
        R"({"type":"error","error":{"type":"invalid_request_error","message":"prompt is too long: 210000 tokens > 200000 maximum"}})",
    };
    for (const char* b : bodies) {
        scripted_server s;
        s.then_json(400, b);
        ania::openai::client llm(options(s));
        const std::vector<message> msgs{message::user("hi")};
        const ania::completion c = llm.complete(one_user(msgs));
        CHECK_FALSE(c.ok);
        CHECK(c.cause.kind == ania::failure_kind::context_length_exceeded);
        CHECK(s.count() == 1);
    }
}

TEST_CASE("client: malformed bodies, invalid UTF-8, a 50 MB body", "[openai][errors]") {
    const std::vector<message> msgs{message::user("hi")};
    {
        scripted_server s;
        s.then_json(200, "this is not json");
        s.then_json(200, R"({"choices":[]})");
        ania::openai::client llm(options(s));
        const ania::completion a = llm.complete(one_user(msgs));
        CHECK_FALSE(a.ok);
        CHECK(a.cause.kind == ania::failure_kind::malformed);
        const ania::completion b = llm.complete(one_user(msgs));
        CHECK_FALSE(b.ok);
        CHECK(b.error.find("no choice") != std::string::npos);
        CHECK(s.count() == 2);  // neither was retried: the same server would say the same again
    }
    {
        scripted_server s;
        s.then_json(200, answer("ok") .replace(answer("ok").find("ok"), 2, "o\xff\xfek"));
        ania::openai::client llm(options(s));
        const ania::completion c = llm.complete(one_user(msgs));
        REQUIRE(c.ok);
        CHECK(c.reply.content == "o\xEF\xBF\xBD\xEF\xBF\xBDk");  // each bad byte one U+FFFD, the answer kept
    }
    {
        scripted_server s;
        const std::string big = answer(std::string(std::size_t(50) << 20, 'x'));
        s.then_json(200, big);
        ania::openai::client llm(options(s));
        const ania::completion c = llm.complete(one_user(msgs));
        CHECK_FALSE(c.ok);
        CHECK(c.cause.kind == ania::failure_kind::malformed);
        CHECK(c.error.find("larger than") != std::string::npos);
    }
}

TEST_CASE("client: a connection reset and a refused connection are network failures, retried", "[openai][errors]") {
    const std::vector<message> msgs{message::user("hi")};
    ania_test::resetting_server reset("HTTP/1.1 200 OK\r\nContent-Length: 1000\r\n\r\n{\"choi", 8);
    ania::openai::client_options o;
    o.base_url = reset.url();
    o.api_key = key;
    o.retry.max_retries = 1;
    o.retry.initial = 10ms;
    ania::openai::client llm(o);
    const ania::completion c = llm.complete(one_user(msgs));
    CHECK_FALSE(c.ok);
    CHECK(c.cause.kind == ania::failure_kind::network);
    CHECK(c.cause.retryable);
    CHECK(c.cause.attempts == 2);
    CHECK(c.error.find(key) == std::string::npos);

    o.base_url = "http://127.0.0.1:1/v1";  // nothing listens on port 1
    ania::openai::client refused(o);
    const ania::completion d = refused.complete(one_user(msgs));
    CHECK_FALSE(d.ok);
    CHECK(d.cause.kind == ania::failure_kind::network);
}

TEST_CASE("client: a server that stalls mid-stream hits the stall timeout", "[openai][errors]") {
    scripted_server s;
    s.otherwise([&](const httplib::Request&, httplib::Response& res) {
        res.set_chunked_content_provider("text/event-stream", [&](std::size_t, httplib::DataSink& sink) {
            const std::string first = "data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"he\"}}]}\n\n";
            sink.write(first.data(), first.size());
            s.hold(10s);  // then nothing
            sink.done();
            return true;
        });
    });
    auto o = options(s);
    o.stream = true;
    o.timeouts.stall = 300ms;
    o.retry.max_retries = 3;
    ania::openai::client llm(o);
    const std::vector<message> msgs{message::user("hi")};
    const auto t0 = std::chrono::steady_clock::now();
    const ania::completion c = llm.complete(one_user(msgs));
    const auto took = std::chrono::steady_clock::now() - t0;
    s.release();
    CHECK_FALSE(c.ok);
    CHECK(c.cause.kind == ania::failure_kind::timeout);
    CHECK(c.error.find("mid-stream") != std::string::npos);
    CHECK(c.cause.attempts == 1);  // text already reached the caller: a retry would repeat it
    CHECK(took < 5s);
}

TEST_CASE("client: a server that does not answer in time hits the total timeout, and it is retried", "[openai][errors]") {
    scripted_server s;
    s.then([&](const httplib::Request&, httplib::Response& res) {
        s.hold(3s);  // longer than the total timeout
        res.set_content(answer("late"), "application/json");
    });
    s.then_json(200, answer("in time"));
    auto o = options(s);
    o.timeouts.total = 300ms;
    o.retry.max_retries = 1;
    ania::openai::client llm(o);
    const std::vector<message> msgs{message::user("hi")};
    const ania::completion c = llm.complete(one_user(msgs));
    s.release();
    REQUIRE(c.ok);
    CHECK(c.reply.content == "in time");
    CHECK(c.cause.attempts == 2);
    o.retry.max_retries = 0;
    scripted_server s2;
    s2.then([&](const httplib::Request&, httplib::Response& res) {
        s2.hold(3s);
        res.set_content(answer("late"), "application/json");
    });
    o.base_url = s2.url();
    ania::openai::client slow(o);
    const ania::completion d = slow.complete(one_user(msgs));
    s2.release();
    CHECK_FALSE(d.ok);
    CHECK(d.cause.kind == ania::failure_kind::timeout);
    CHECK(d.cause.retryable);
}

TEST_CASE("client: cancelling through the stop token aborts a stream at once", "[openai]") {
    scripted_server s;
    s.otherwise([&](const httplib::Request&, httplib::Response& res) {
        res.set_chunked_content_provider("text/event-stream", [&](std::size_t, httplib::DataSink& sink) {
            const std::string first = "data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"he\"}}]}\n\n";
            sink.write(first.data(), first.size());
            s.hold(20s);
            sink.done();
            return true;
        });
    });
    std::stop_source stop;
    std::chrono::steady_clock::time_point asked;
    auto o = options(s);
    o.stream = true;
    o.on_text = [&](std::string_view) {
        std::thread([&] {
            std::this_thread::sleep_for(50ms);
            asked = std::chrono::steady_clock::now();
            stop.request_stop();
        }).detach();
    };
    ania::openai::client llm(o);
    const std::vector<message> msgs{message::user("hi")};
    const ania::completion c = llm.complete(one_user(msgs, stop.get_token()));
    const auto latency = std::chrono::steady_clock::now() - asked;
    s.release();
    CHECK_FALSE(c.ok);
    CHECK(c.cause.kind == ania::failure_kind::cancelled);
    CHECK(latency < 1s);  // woken by the stop callback, not by a once-a-second progress check (measured: 0.15-0.3 ms on loopback)
}

TEST_CASE("client: a server that ignores stream:true and answers JSON is still understood", "[openai][sse]") {
    scripted_server s;
    s.then_json(200, answer("plain"));
    auto o = options(s);
    o.stream = true;
    ania::openai::client llm(o);
    const std::vector<message> msgs{message::user("hi")};
    const ania::completion c = llm.complete(one_user(msgs));
    REQUIRE(c.ok);
    CHECK(c.reply.content == "plain");
}

TEST_CASE("client: one client from several threads at once", "[openai][threads]") {
    scripted_server s;
    s.otherwise([](const httplib::Request&, httplib::Response& res) { res.set_content(answer("ok"), "application/json"); });
    ania::openai::client llm(options(s));
    std::atomic<int> ok{0};
    std::vector<std::thread> ts;
    for (int t = 0; t < 4; ++t)
        ts.emplace_back([&] {
            const std::vector<message> msgs{message::user("hi")};
            for (int i = 0; i < 10; ++i) ok += llm.complete(one_user(msgs)).ok ? 1 : 0;
        });
    for (auto& t : ts) t.join();
    CHECK(ok == 40);
    CHECK(s.count() == 40);
}

namespace {

struct capture_agent_log {
    std::shared_ptr<std::vector<std::string>> lines = std::make_shared<std::vector<std::string>>();
    void operator()(ania::log_level, std::string_view text) const { lines->emplace_back(text); }
};

struct http_traits : ania::default_agent_traits {
    using client = ania::openai::client;
    using log = capture_agent_log;
};

std::string call_answer(std::string_view id, std::string_view name, std::string_view args) {
    return R"({"choices":[{"index":0,"message":{"role":"assistant","content":null,"tool_calls":[{"id":")" + std::string(id) +
           R"(","type":"function","function":{"name":")" + std::string(name) + R"(","arguments":)" + json(std::string(args)).dump() +
           R"(}}]},"finish_reason":"tool_calls"}],"usage":{"prompt_tokens":50,"completion_tokens":5,"total_tokens":55}})";
}

} // namespace

TEST_CASE("agent over the real client: tool calls over several rounds against the scripted server", "[openai][agent]") {
    scripted_server s;
    s.then_json(200, call_answer("call_1", "echo", R"({"x":1})"));
    s.then_json(200, call_answer("call_2", "echo", R"({"x":2})"));
    s.then_json(200, answer("两次都好了"));
    ania::ram_store store;
    ania::background_writer<ania::ram_store> writer(store);
    std::vector<ania::tool> tools{{"echo", "echoes", json{{"type", "object"}}, [](std::string_view a) { return "echo:" + std::string(a); }}};
    ania::basic_agent<http_traits> a(writer, {.client = ania::openai::client(options(s)), .tools = ania::tool_registry(tools)},
                                     "f:1", {.system_prompt = "你是 Ania。"});
    const ania::chat_result r = a.chat("跑两次");
    REQUIRE(r.ok());
    CHECK(r.reply == "两次都好了");
    CHECK(r.stats.iterations == 3);
    const auto reqs = s.requests();
    REQUIRE(reqs.size() == 3);
    const json last = json::parse(reqs[2].body);
    CHECK(last["tools"][0]["function"]["name"] == "echo");
    const json& m = last["messages"];
    REQUIRE(m.size() == 6);  // system, user, call, result, call, result
    CHECK(m[0]["content"] == "你是 Ania。");
    CHECK(m[3]["role"] == "tool");
    CHECK(m[3]["tool_call_id"] == "call_1");
    CHECK(m[3]["content"] == "echo:{\"x\":1}");
    CHECK(m[5]["tool_call_id"] == "call_2");
    writer.flush();
    CHECK(store.load("f:1").size() == 6);  // user, call, result, call, result, reply
}

TEST_CASE("agent over the real client: context length exceeded compresses the history and retries once", "[openai][agent]") {
    scripted_server s;
    ania::ram_store store;
    {  // a history to compress: six turns written before
        std::vector<message> h;
        for (int i = 0; i < 6; ++i) {
            h.push_back(message::user("问题 " + std::to_string(i) + std::string(200, 'a')));
            h.push_back(message::assistant("回答 " + std::to_string(i) + std::string(200, 'b')));
        }
        store.append("f:1", h);
    }
    ania::background_writer<ania::ram_store> writer(store);
    struct cut_traits : http_traits {
        using compressor = ania::truncate_oldest_half;
    };
    ania::basic_agent<cut_traits> a(writer, {.client = ania::openai::client(options(s))}, "f:1");
    s.then_json(400, R"({"error":{"message":"maximum context length exceeded","code":"context_length_exceeded"}})");
    s.then_json(200, answer("短一点就好了"));
    const ania::chat_result r = a.chat("还记得吗");
    REQUIRE(r.ok());
    CHECK(r.reply == "短一点就好了");
    CHECK(r.compressions == 1);
    const auto reqs = s.requests();
    REQUIRE(reqs.size() == 2);
    CHECK(json::parse(reqs[1].body)["messages"].size() < json::parse(reqs[0].body)["messages"].size());
    writer.flush();
    CHECK(store.load("f:1").size() == 6 + 2);  // half of the 12 kept, then the turn

    // Twice in a row: the turn fails with the typed reason (one retry, not a loop).
    s.then_json(400, R"({"error":{"message":"too long","code":"context_length_exceeded"}})");
    s.then_json(400, R"({"error":{"message":"too long","code":"context_length_exceeded"}})");
    const ania::chat_result f = a.chat("再来");
    CHECK(f.end == ania::turn_end::failed);
    CHECK(f.failure.kind == ania::failure_kind::context_length_exceeded);
    CHECK(s.count() == 4);
}

TEST_CASE("agent over the real client: the window's cached history sends the bytes a whole body would", "[openai][agent][wire]") {
    // Two agents on the same stored history and the same script, one with the wire cache (the default), one
    // without: every request the server receives must be byte for byte the same, through tool rounds, a
    // retried 503, a compression after context_length_exceeded, streamed and not. The history (~300 KB) is
    // more than curl reads in one callback, so the pieces cross its buffer boundaries.
    for (const bool stream : {false, true}) {
        std::vector<std::string> bodies[2];
        for (const bool cached : {true, false}) {
            scripted_server s;
            const auto reply = [&](std::string text) {
                if (!stream) return s.then_json(200, answer(text));
                s.then_stream("data: " + json{{"choices", json::array({{{"index", 0}, {"delta", {{"content", text}}}}})}}.dump() +
                              "\n\ndata: [DONE]\n\n");
            };
            ania::ram_store store;
            {
                std::vector<message> h;
                for (int i = 0; i < 150; ++i) {
                    h.push_back(message::user("[nickname:小明] 问题 " + std::to_string(i) + std::string(1000, 'q') + "\n\t\"x\""));
                    h.push_back(message::assistant("回答 " + std::to_string(i) + std::string(1000, 'a')));
                }
                store.append("g:1", h);
            }
            ania::background_writer<ania::ram_store> writer(store);
            struct cut_traits : http_traits {
                using compressor = ania::truncate_oldest_half;
            };
            std::vector<ania::tool> tools{{"echo", "echoes", json{{"type", "object"}}, [](std::string_view a) { return "echo:" + std::string(a); }}};
            ania::agent_options opt{.system_prompt = "你是 Ania。"};
            opt.window.max_context_tokens = 0;  // compressions only when the server says the prompt is too long
            opt.window.wire_cache = cached;
            ania::openai::client_options o = options(s);
            o.stream = stream;
            ania::basic_agent<cut_traits> a(writer, {.client = ania::openai::client(o), .tools = ania::tool_registry(tools)}, "g:1", opt);
            reply("第一");
            s.then_json(200, call_answer("call_1", "echo", R"({"x":1})"));
            reply("第二");
            s.then_json(503, R"({"error":{"message":"overloaded"}})");
            reply("第三");
            s.then_json(400, R"({"error":{"message":"maximum context length exceeded","code":"context_length_exceeded"}})");
            reply("第四");
            reply("第五");
            for (const char* q : {"一", "二", "三", "四", "五"}) REQUIRE(a.chat(q).ok());
            CHECK(a.window().wire_bytes().first() + a.window().wire_bytes().size() == (cached ? a.window().size() - 2 : 0));  // all but the last turn
            for (const auto& r : s.requests()) bodies[cached ? 0 : 1].push_back(r.body);
        }
        REQUIRE(bodies[0].size() == 8);
        REQUIRE(bodies[0].size() == bodies[1].size());
        for (std::size_t i = 0; i < bodies[0].size(); ++i) {
            INFO("request " << i << (stream ? " (streamed)" : ""));
            CHECK(bodies[0][i].size() > 300'000 / (i >= 6 ? 2 : 1));
            CHECK(bodies[0][i] == bodies[1][i]);
        }
    }
}

TEST_CASE("config: llm.* reaches the client options; compressor.* and ocr.* lie over it", "[openai][config]") {
    const ania::config c = ania::parse_config(R"({"llm":{"base_url":"http://h/v1","api_key":"k1","model":"big","stream":true,
        "stall_timeout_ms":5000,"max_retries":4,"replay_reasoning":false,"extra":{"temperature":0.2}},
        "compressor":{"model":"small"},"ocr":{"api_key":"k2"}})");
    const auto o = ania::from_config<ania::openai::client_options>(c);
    CHECK(o.base_url == "http://h/v1");
    CHECK(o.model == "big");
    CHECK(o.stream);
    CHECK(o.timeouts.stall == 5s);
    CHECK(o.retry.max_retries == 4);
    CHECK_FALSE(o.messages.include_reasoning);
    CHECK(o.extra["temperature"] == 0.2);
    const auto comp = ania::from_config<ania::openai::client_options>(c, ania::model_role::compression);
    CHECK(comp.model == "small");
    CHECK(comp.api_key == "k1");  // compressor.api_key empty: llm's
    CHECK(comp.base_url == "http://h/v1");
    const auto vis = ania::from_config<ania::openai::client_options>(c, ania::model_role::vision);
    CHECK(vis.api_key == "k2");
    CHECK(vis.model == ania::config{}.ocr.model);
    CHECK_FALSE(vis.stream);
    const ania::config none = ania::parse_config(R"({"llm":{"model":"big"}})");
    CHECK(ania::from_config<ania::openai::client_options>(none, ania::model_role::compression).model == "big");  // no compressor.model: the main client
    CHECK_THROWS_WITH(ania::parse_config(R"({"llm":{"extra":[1]}})"), Catch::Contains("llm.extra"));
    CHECK_THROWS_WITH(ania::parse_config(R"({"llm":{"max_retries":-1}})"), Catch::Contains("llm.max_retries"));
}

namespace {

std::string embedding_answer(const std::vector<std::vector<double>>& vs) {
    json data = json::array();
    for (std::size_t i = 0; i < vs.size(); ++i) data.push_back({{"object", "embedding"}, {"index", i}, {"embedding", vs[i]}});
    return json{{"object", "list"}, {"data", data}, {"usage", {{"prompt_tokens", 3}, {"total_tokens", 3}}}}.dump();
}

std::string base64_of(const std::vector<float>& v) {
    static const char* t = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    std::string bytes(v.size() * 4, '\0');
    std::memcpy(bytes.data(), v.data(), bytes.size());
    std::string out;
    for (std::size_t i = 0; i < bytes.size(); i += 3) {
        const std::uint32_t n = static_cast<unsigned char>(bytes[i]) << 16 |
                                (i + 1 < bytes.size() ? static_cast<unsigned char>(bytes[i + 1]) << 8 : 0) |
                                (i + 2 < bytes.size() ? static_cast<unsigned char>(bytes[i + 2]) : 0);
        out += t[n >> 18 & 63];
        out += t[n >> 12 & 63];
        out += i + 1 < bytes.size() ? t[n >> 6 & 63] : '=';
        out += i + 2 < bytes.size() ? t[n & 63] : '=';
    }
    return out;
}

ania::openai::embedder_options embed_options(const scripted_server& s) {
    ania::openai::embedder_options o;
    o.base_url = s.url();
    o.api_key = key;
    o.model = "emb";
    o.retry.initial = 10ms;
    o.log = [](ania::log_level, std::string_view) {};
    return o;
}

} // namespace

TEST_CASE("embedder: float arrays, base64, batching, index order", "[openai][embedder]") {
    scripted_server s;
    s.then_json(200, embedding_answer({{0.5, -1.0, 2.0}}));
    ania::openai::embedder e(embed_options(s));
    const auto v = e.embed("猫");
    REQUIRE(v);
    CHECK(*v == std::vector<float>{0.5f, -1.0f, 2.0f});
    CHECK(e.dimensions() == 3);
    CHECK(json::parse(s.requests()[0].body)["input"][0] == "猫");
    CHECK(s.requests()[0].path == "/v1/embeddings");

    // base64, two batches (batch = 2), the second answer's entries out of order.
    auto o = embed_options(s);
    o.base64 = true;
    o.batch = 2;
    ania::openai::embedder b(o);
    const std::vector<float> f1{1, 2}, f2{3, 4}, f3{5, 6};
    s.then_json(200, json{{"data", {{{"index", 0}, {"embedding", base64_of(f1)}}, {{"index", 1}, {"embedding", base64_of(f2)}}}}}.dump());
    s.then_json(200, json{{"data", {{{"index", 0}, {"embedding", base64_of(f3)}}}}}.dump());
    const std::string_view texts[] = {"a", "b", "c"};
    const ania::openai::embeddings r = b.embed_batch(texts);
    REQUIRE(r.ok);
    REQUIRE(r.vectors.size() == 3);
    CHECK(r.vectors[0] == f1);
    CHECK(r.vectors[1] == f2);
    CHECK(r.vectors[2] == f3);
    CHECK(json::parse(s.requests()[1].body)["encoding_format"] == "base64");
    CHECK(s.count() == 3);
}

TEST_CASE("embedder: a wrong dimension, a non-finite value, a missing entry are errors, not vectors", "[openai][embedder]") {
    scripted_server s;
    auto o = embed_options(s);
    o.dimensions = 3;
    ania::openai::embedder e(o);
    s.then_json(200, embedding_answer({{1.0, 2.0}}));
    CHECK_FALSE(e.embed("x"));
    s.then_json(200, R"({"data":[{"index":0,"embedding":[1.0, 1e39, 2.0]}]})");  // 1e39 is not a float
    CHECK_FALSE(e.embed("x"));
    s.then_json(200, R"({"data":[]})");
    CHECK_FALSE(e.embed("x"));
    s.then_json(200, R"({"data":[{"index":0,"embedding":"@@@"}]})");
    CHECK_FALSE(e.embed("x"));
    s.then_json(200, embedding_answer({{1.0, 2.0, 3.0}}));
    CHECK(e.embed("x"));
    s.then_json(401, R"({"error":{"message":"bad key"}})");
    const std::string_view one[] = {"x"};
    const ania::openai::embeddings r = e.embed_batch(one);
    CHECK_FALSE(r.ok);
    CHECK(r.cause.kind == ania::failure_kind::auth);
}

// ---- Anthropic Messages ------------------------------------------------------------------------------

#include <ania/anthropic/client.hpp>

namespace {

/// An Anthropic event stream: message_start with input usage (cache read and creation), a thinking block, a
/// text block, a tool_use block whose input arrives as partial JSON, a ping, message_delta with the stop
/// reason and output usage, message_stop.
const std::string recorded_events =
    "event: message_start\n"
    "data: {\"type\":\"message_start\",\"message\":{\"id\":\"m1\",\"role\":\"assistant\",\"content\":[],\"usage\":{\"input_tokens\":100,\"cache_read_input_tokens\":50,\"cache_creation_input_tokens\":25,\"output_tokens\":1}}}\n\n"
    "event: content_block_start\n"
    "data: {\"type\":\"content_block_start\",\"index\":0,\"content_block\":{\"type\":\"thinking\",\"thinking\":\"\"}}\n\n"
    "event: content_block_delta\n"
    "data: {\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"thinking_delta\",\"thinking\":\"想想\"}}\n\n"
    "event: content_block_start\n"
    "data: {\"type\":\"content_block_start\",\"index\":1,\"content_block\":{\"type\":\"text\",\"text\":\"\"}}\n\n"
    "event: ping\ndata: {\"type\":\"ping\"}\n\n"
    "event: content_block_delta\n"
    "data: {\"type\":\"content_block_delta\",\"index\":1,\"delta\":{\"type\":\"text_delta\",\"text\":\"我查\"}}\r\n\r\n"
    "event: content_block_delta\n"
    "data: {\"type\":\"content_block_delta\",\"index\":1,\"delta\":{\"type\":\"text_delta\",\"text\":\"一下\"}}\n\n"
    "event: content_block_start\n"
    "data: {\"type\":\"content_block_start\",\"index\":2,\"content_block\":{\"type\":\"tool_use\",\"id\":\"toolu_1\",\"name\":\"memory_search\",\"input\":{}}}\n\n"
    "event: content_block_delta\n"
    "data: {\"type\":\"content_block_delta\",\"index\":2,\"delta\":{\"type\":\"input_json_delta\",\"partial_json\":\"{\\\"query\\\": \\\"\"}}\n\n"
    "event: content_block_delta\n"
    "data: {\"type\":\"content_block_delta\",\"index\":2,\"delta\":{\"type\":\"input_json_delta\",\"partial_json\":\"猫\\\"}\"}}\n\n"
    "event: content_block_stop\ndata: {\"type\":\"content_block_stop\",\"index\":2}\n\n"
    "event: message_delta\n"
    "data: {\"type\":\"message_delta\",\"delta\":{\"stop_reason\":\"tool_use\"},\"usage\":{\"output_tokens\":42}}\n\n"
    "event: message_stop\ndata: {\"type\":\"message_stop\"}\n\n";

void check_events(const ania::completion& c) {
    REQUIRE(c.ok);
    CHECK(c.reply.content == "我查一下");
    CHECK(c.reply.reasoning_content == std::optional<std::string>("想想"));
    REQUIRE(c.reply.tool_calls.size() == 1);
    CHECK(c.reply.tool_calls[0].id == "toolu_1");
    CHECK(c.reply.tool_calls[0].name == "memory_search");
    CHECK(json::parse(c.reply.tool_calls[0].arguments) == json{{"query", "猫"}});
    CHECK(c.finish_reason == "tool_calls");
    CHECK(c.used.prompt_tokens == std::optional<std::int64_t>(175));  // input + cache read + cache creation
    CHECK(c.used.cached_prompt_tokens == std::optional<std::int64_t>(50));
    CHECK(c.used.completion_tokens == std::optional<std::int64_t>(42));
}

ania::anthropic::client_options claude(const scripted_server& s) {
    ania::anthropic::client_options o;
    o.base_url = s.url();
    o.api_key = key;
    o.model = "claude-test";
    o.retry.initial = 10ms;
    o.log = [](ania::log_level, std::string_view) {};
    return o;
}

} // namespace

TEST_CASE("anthropic: the request maps system, calls, grouped results, images, tools and cache_control", "[anthropic]") {
    std::vector<ania::tool_call> calls{{"c1", "function", "echo", R"({"x":1})", {}, {}}, {"c2", "function", "echo", "not json", {}, {}}};
    const std::vector<message> base{message::system("你是 Ania。")};
    const std::vector<message> history{message::user("早"), message::assistant_calls(calls), message::tool_result("c1", "r1"),
                                       message::tool_result("c2", "r2"), message::assistant("好了")};
    const std::vector<message> turn{message::developer("今天是周一"), message::user("看图"),
                                    message::user({ania::content_part::make_text("这张"),
                                                   ania::content_part::make_image("data:image/png;base64,AAAA")})};
    const ania::tool t{"echo", "echoes", json{{"type", "object"}, {"properties", json::object()}}, [](std::string_view) { return std::string(); }};
    ania::anthropic::body_options o;
    o.model = "claude-test";
    o.cache_prompt = true;
    const json j = json::parse(ania::anthropic::request_body(
        {ania::message_sequence(std::span<const message>(base), std::span<const message>(history), std::span<const message>(turn)),
         std::span(&t, 1), {}}, o));
    CHECK(j["model"] == "claude-test");
    CHECK(j["max_tokens"] == 4096);
    CHECK(j["system"][0]["text"] == "你是 Ania。\n\n今天是周一");
    CHECK(j["system"][0]["cache_control"]["type"] == "ephemeral");
    const json& m = j["messages"];
    REQUIRE(m.size() == 5);  // user, assistant (calls), user (both results), assistant, user (two merged)
    CHECK(m[0]["role"] == "user");
    CHECK(m[1]["content"][0]["type"] == "tool_use");
    CHECK(m[1]["content"][0]["input"] == json{{"x", 1}});
    CHECK(m[1]["content"][1]["input"] == json::object());  // arguments that are not JSON: no input
    CHECK(m[2]["role"] == "user");
    REQUIRE(m[2]["content"].size() == 2);
    CHECK(m[2]["content"][0]["type"] == "tool_result");
    CHECK(m[2]["content"][1]["tool_use_id"] == "c2");
    CHECK(m[3]["content"][0]["text"] == "好了");
    CHECK(m[3]["content"][0]["cache_control"]["type"] == "ephemeral");  // the end of the history: cached next turn
    REQUIRE(m[4]["content"].size() == 3);
    CHECK(m[4]["content"][2]["type"] == "image");
    CHECK(m[4]["content"][2]["source"]["media_type"] == "image/png");
    CHECK(m[4]["content"][2]["source"]["data"] == "AAAA");
    CHECK(j["tools"][0]["name"] == "echo");
    CHECK(j["tools"][0]["input_schema"]["type"] == "object");
}

TEST_CASE("anthropic: the recorded event stream at every split, and the plain answer, through the client", "[anthropic][sse]") {
    for (std::size_t k = 0; k <= recorded_events.size(); ++k) {
        INFO("split at " << k);
        ania::anthropic::stream_accumulator acc;
        ania::http::sse_decoder sse;
        const auto on = [&](const ania::http::sse_event& e) { acc.add(e.data); };
        sse.feed(std::string_view(recorded_events).substr(0, k), on);
        sse.feed(std::string_view(recorded_events).substr(k), on);
        sse.finish(on);
        CHECK(acc.done());
        check_events(std::move(acc).finish());
    }
    scripted_server s;
    s.then([](const httplib::Request&, httplib::Response& res) {
        res.set_chunked_content_provider("text/event-stream", [](std::size_t, httplib::DataSink& sink) {
            for (std::size_t i = 0; i < recorded_events.size(); i += 97) sink.write(recorded_events.data() + i, std::min<std::size_t>(97, recorded_events.size() - i));
            sink.done();
            return true;
        });
    });
    s.then_json(529, R"({"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}})");
    s.then_json(200, R"({"id":"m2","type":"message","role":"assistant","content":[{"type":"text","text":"好的"}],
                        "stop_reason":"end_turn","usage":{"input_tokens":7,"output_tokens":3}})");
    auto o = claude(s);
    o.stream = true;
    std::string texts;
    o.on_text = [&](std::string_view t) { texts += t; };
    ania::anthropic::client streaming(o);
    const std::vector<message> msgs{message::user("hi")};
    check_events(streaming.complete(one_user(msgs)));
    CHECK(texts == "我查一下");
    ania::anthropic::client plain(claude(s));
    const ania::completion c = plain.complete(one_user(msgs));  // 529 overloaded: retried
    REQUIRE(c.ok);
    CHECK(c.reply.content == "好的");
    CHECK(c.finish_reason == "stop");
    CHECK(c.used.prompt_tokens == std::optional<std::int64_t>(7));
    CHECK(c.cause.attempts == 2);
    const auto reqs = s.requests();
    REQUIRE(reqs.size() == 3);
    CHECK(reqs[0].path == "/v1/messages");
    CHECK(reqs[0].authorization.empty());  // the key is x-api-key, not a bearer token
    CHECK(json::parse(reqs[0].body)["stream"] == true);
}

TEST_CASE("anthropic: the window's cached blocks send the bytes a whole body would, over loopback", "[anthropic][agent][wire]") {
    // As the OpenAI case: two agents, cache on and off, one script (a tool round, a compaction with a summary
    // head kept as the stable prefix, prompt caching on): every request byte for byte the same.
    struct claude_traits : http_traits {
        using client = ania::anthropic::client;
        using compressor = ania::truncate_oldest_half;
    };
    const auto text = [](std::string t) {
        return R"({"id":"m","type":"message","role":"assistant","content":[{"type":"text","text":")" + t +
               R"("}],"stop_reason":"end_turn","usage":{"input_tokens":7,"output_tokens":3}})";
    };
    const std::string call = R"({"id":"m","type":"message","role":"assistant","content":[{"type":"tool_use","id":"tu_1","name":"echo",)"
                             R"("input":{"x":1}}],"stop_reason":"tool_use","usage":{"input_tokens":7,"output_tokens":3}})";
    std::vector<std::string> bodies[2];
    for (const bool cached : {true, false}) {
        scripted_server s;
        ania::ram_store store;
        {
            std::vector<message> h;
            for (int i = 0; i < 100; ++i) {
                h.push_back(message::user("问题 " + std::to_string(i) + std::string(1000, 'q')));
                h.push_back(message::assistant("回答 " + std::to_string(i) + std::string(1000, 'a')));
            }
            store.append("g:1", h);
        }
        ania::background_writer<ania::ram_store> writer(store);
        std::vector<ania::tool> tools{{"echo", "echoes", json{{"type", "object"}}, [](std::string_view a) { return "echo:" + std::string(a); }}};
        ania::agent_options opt{.system_prompt = "你是 Ania。"};
        opt.window.max_context_tokens = 0;
        opt.window.wire_cache = cached;
        ania::anthropic::client_options o = claude(s);
        o.cache_prompt = true;
        ania::basic_agent<claude_traits> a(writer, {.client = ania::anthropic::client(o), .tools = ania::tool_registry(tools)}, "g:1", opt);
        s.then_json(200, text("一"));
        s.then_json(200, call);
        s.then_json(200, text("二"));
        s.then_json(400, R"({"type":"error","error":{"type":"invalid_request_error","message":"prompt is too long: 250000 tokens > 200000 maximum"}})");
        s.then_json(200, text("三"));
        s.then_json(200, text("四"));
        for (const char* q : {"一", "二", "三", "四"}) REQUIRE(a.chat(q).ok());
        for (const auto& r : s.requests()) bodies[cached ? 0 : 1].push_back(r.body);
    }
    REQUIRE(bodies[0].size() == 6);
    REQUIRE(bodies[1].size() == 6);
    for (std::size_t i = 0; i < 6; ++i) {
        INFO("request " << i);
        CHECK(bodies[0][i].size() > 100'000);
        CHECK(bodies[0][i].find("cache_control") != std::string::npos);
        CHECK(bodies[0][i] == bodies[1][i]);
    }
}

TEST_CASE("anthropic: errors are typed like OpenAI's: too long, bad key (redacted), an error event mid-stream", "[anthropic][errors]") {
    scripted_server s;
    s.then_json(400, R"({"type":"error","error":{"type":"invalid_request_error","message":"prompt is too long: 210000 tokens > 200000 maximum"}})");
    s.then_json(401, std::string(R"({"type":"error","error":{"type":"authentication_error","message":"invalid x-api-key )") + key + "\"}}");
    ania::anthropic::client c(claude(s));
    const std::vector<message> msgs{message::user("hi")};
    const ania::completion a = c.complete(one_user(msgs));
    CHECK(a.cause.kind == ania::failure_kind::context_length_exceeded);
    const ania::completion b = c.complete(one_user(msgs));
    CHECK(b.cause.kind == ania::failure_kind::auth);
    CHECK(b.cause.type == "authentication_error");
    CHECK(b.error.find(key) == std::string::npos);
    ania::anthropic::stream_accumulator acc;
    CHECK(acc.add(R"({"type":"message_start","message":{"usage":{"input_tokens":1}}})"));
    CHECK_FALSE(acc.add(R"({"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}})"));
    const ania::completion e = std::move(acc).finish();
    CHECK_FALSE(e.ok);
    CHECK(e.error.find("Overloaded") != std::string::npos);
}

TEST_CASE("anthropic: members of the wrong JSON type are ignored, never thrown through the transport", "[anthropic][errors]") {
    // Found by fuzz_stream: `{"type":1}` made json::value() throw type_error out of add(), which the client calls
    // from inside libcurl's write callback (an exception there ends the process).
    ania::anthropic::stream_accumulator acc;
    CHECK(acc.add(R"({"type":1})"));
    CHECK(acc.add(R"({"type":"message_start","message":{"usage":{"input_tokens":1}}})"));
    CHECK(acc.add(R"({"type":"content_block_start","index":0,"content_block":{"type":["text"],"id":2,"name":null}})"));
    CHECK(acc.add(R"({"type":"content_block_start","index":1,"content_block":{"type":"tool_use","id":7,"name":{}}})"));
    CHECK(acc.add(R"({"type":"content_block_delta","index":1,"delta":{"type":false,"text":"x"}})"));
    CHECK(acc.add(R"({"type":"message_delta","delta":{"stop_reason":[1]},"usage":{"output_tokens":"9"}})"));
    CHECK(acc.add(R"({"type":"message_stop"})"));
    const ania::completion s = std::move(acc).finish();
    REQUIRE(s.ok);
    REQUIRE(s.reply.tool_calls.size() == 1);
    CHECK(s.reply.tool_calls[0].id == "7");  // a number id is kept as its digits
    CHECK(s.reply.tool_calls[0].name.empty());
    CHECK(s.finish_reason.empty());

    const ania::completion a = ania::anthropic::parse_answer(
        R"({"type":{},"stop_reason":5,"content":[{"type":3},{"type":"tool_use","id":[],"name":"f"},{"type":"text","text":"ok"}]})");
    REQUIRE(a.ok);
    CHECK(a.reply.content == "ok");
    REQUIRE(a.reply.tool_calls.size() == 1);
    CHECK(a.reply.tool_calls[0].name == "f");
    CHECK(a.finish_reason == "5");

    // The same through the streaming client, over loopback: the process goes on and the answer is kept.
    scripted_server srv;
    srv.then([](const httplib::Request&, httplib::Response& res) {
        res.set_chunked_content_provider("text/event-stream", [](std::size_t, httplib::DataSink& sink) {
            const std::string events = "event: x\ndata: {\"type\":1}\n\n" + recorded_events +
                                       "data: {\"type\":\"content_block_delta\",\"index\":[],\"delta\":{\"type\":{}}}\n\n";
            sink.write(events.data(), events.size());
            sink.done();
            return true;
        });
    });
    auto o = claude(srv);
    o.stream = true;
    ania::anthropic::client streaming(o);
    const std::vector<message> msgs{message::user("hi")};
    check_events(streaming.complete(one_user(msgs)));
}

// ---- providers' quirks (issue: five behaviours the clients mishandled) ------------------------------------
// Each case below failed before its fix.

namespace {

/// One streamed chunk: a delta, members of its choice (finish_reason), members of the chunk (usage).
std::string chunk(std::string_view delta_json, std::string_view in_choice = "", std::string_view top = "") {
    return "data: {\"id\":\"q\",\"choices\":[{\"index\":0,\"delta\":" + std::string(delta_json) + std::string(in_choice) + "}]" +
           std::string(top) + "}\n\n";
}

ania::openai::client_options streaming(const scripted_server& s, capture_log log = {}) {
    auto o = options(s, log);
    o.stream = true;
    return o;
}

} // namespace

TEST_CASE("quirks: keep-alive events with empty data, and field-only events, are skipped, never parsed", "[openai][sse][quirks]") {
    // A relay's keep-alives between the recorded stream's events: "data:", "data: ", "retry: 3000", "event:"
    // alone, "event: ping" without data, a blank-only data line.
    std::string stream;
    const std::string_view keep_alives[] = {"data:\n\n", "data: \n\n", "retry: 3000\n\n", "event:\n\n", "event: ping\n\n",
                                            "data:  \r\n\r\n", "id: 7\nretry: 10\n\n"};
    std::size_t k = 0;
    for (std::size_t at = 0, next; (next = recorded_stream.find("\n\n", at)) != std::string::npos; at = next + 2) {
        stream += keep_alives[k++ % std::size(keep_alives)];
        stream.append(recorded_stream, at, next + 2 - at);
    }
    stream.insert(0, "data:\n\n");
    for (std::size_t split = 0; split <= stream.size(); split += 7) {
        INFO("split at " << split);
        check_recorded(decode(stream, split));
    }
    scripted_server s;
    s.then_stream(stream, 5);
    ania::openai::client llm(streaming(s));
    const std::vector<message> msgs{message::user("hi")};
    check_recorded(llm.complete(one_user(msgs)));

    // Anthropic: the same keep-alives between its events.
    std::string events;
    for (std::size_t at = 0, next; (next = recorded_events.find("\n\n", at)) != std::string::npos; at = next + 2) {
        events += "data: \n\n";
        events.append(recorded_events, at, next + 2 - at);
    }
    scripted_server s3;
    s3.then_stream(events, 11);
    auto o = claude(s3);
    o.stream = true;
    ania::anthropic::client c(o);
    check_events(c.complete(one_user(msgs)));
}

TEST_CASE("quirks: parallel tool calls all at index 0, told apart by id, ending with finish_reason stop", "[openai][sse][quirks]") {
    // Ollama: each call whole in one chunk. LiteLLM / Gemini proxies: a call's id once, then argument pieces.
    const std::string ollama = chunk(R"({"role":"assistant","content":"","tool_calls":[{"index":0,"id":"call_x","type":"function","function":{"name":"echo","arguments":"{\"x\":1}"}}]})") +
                               chunk(R"({"tool_calls":[{"index":0,"id":"call_y","type":"function","function":{"name":"echo","arguments":"{\"x\":2}"}}]})") +
                               chunk("{}", R"(,"finish_reason":"stop")") + "data: [DONE]\n\n";
    const std::string pieces = chunk(R"({"tool_calls":[{"index":0,"id":"call_x","type":"function","function":{"name":"echo","arguments":""}}]})") +
                               chunk(R"({"tool_calls":[{"index":0,"function":{"arguments":"{\"x\""}}]})") +
                               chunk(R"({"tool_calls":[{"index":0,"function":{"arguments":":1}"}}]})") +
                               chunk(R"({"tool_calls":[{"index":0,"id":"call_y","type":"function","function":{"name":"echo","arguments":"{\"x\":"}}]})") +
                               chunk(R"({"tool_calls":[{"index":0,"id":"call_y","function":{"arguments":"2}"}}]})") +  // the id repeated: the same call
                               chunk("{}", R"(,"finish_reason":"stop")") + "data: [DONE]\n\n";
    for (const std::string& stream : {ollama, pieces}) {
        for (std::size_t split = 0; split <= stream.size(); split += 13) {
            const ania::completion c = decode(stream, split);
            REQUIRE(c.ok);
            REQUIRE(c.reply.tool_calls.size() == 2);
            CHECK(c.reply.tool_calls[0].id == "call_x");
            CHECK(c.reply.tool_calls[0].arguments == R"({"x":1})");
            CHECK(c.reply.tool_calls[1].id == "call_y");
            CHECK(c.reply.tool_calls[1].arguments == R"({"x":2})");
            CHECK(c.finish_reason == "stop");
        }
    }
    // The agent over the real streamed client runs both, although the finish_reason says "stop".
    scripted_server s;
    s.then_stream(ollama, 17);
    s.then_stream(chunk(R"({"content":"两个都跑了"})", R"(,"finish_reason":"stop")", R"(,"usage":{"prompt_tokens":9,"completion_tokens":1,"total_tokens":10})") +
                  "data: [DONE]\n\n");
    ania::ram_store store;
    ania::background_writer<ania::ram_store> writer(store);
    auto seen = std::make_shared<std::vector<std::string>>();
    std::vector<ania::tool> tools{{"echo", "echoes", json{{"type", "object"}}, [seen](std::string_view a) {
                                       seen->emplace_back(a);
                                       return "echo:" + std::string(a);
                                   }}};
    ania::basic_agent<http_traits> a(writer, {.client = ania::openai::client(streaming(s)), .tools = ania::tool_registry(tools)},
                                     "f:1");
    const ania::chat_result r = a.chat("并行");
    REQUIRE(r.ok());
    CHECK(r.reply == "两个都跑了");
    CHECK(*seen == std::vector<std::string>{R"({"x":1})", R"({"x":2})"});
    const json second = json::parse(s.requests().at(1).body);
    CHECK(second["messages"][2]["tool_call_id"] == "call_x");
    CHECK(second["messages"][3]["tool_call_id"] == "call_y");
}

TEST_CASE("quirks: usage in choices[0].usage (Moonshot) and x_groq.usage (Groq); the top level wins", "[openai][sse][quirks]") {
    const std::string moonshot = chunk(R"({"content":"好"})") +
        "data: {\"choices\":[{\"index\":0,\"delta\":{},\"finish_reason\":\"stop\",\"usage\":{\"prompt_tokens\":77,\"completion_tokens\":3,\"total_tokens\":80}}]}\n\n"
        "data: [DONE]\n\n";
    const std::string groq = chunk(R"({"content":"好"})") +
        "data: {\"choices\":[{\"index\":0,\"delta\":{},\"finish_reason\":\"stop\"}],\"x_groq\":{\"id\":\"r\",\"usage\":{\"prompt_tokens\":66,\"completion_tokens\":4,\"total_tokens\":70}}}\n\n"
        "data: [DONE]\n\n";
    const std::string both = chunk(R"({"content":"好"})") +
        "data: {\"choices\":[],\"x_groq\":{\"usage\":{\"prompt_tokens\":1,\"completion_tokens\":1,\"total_tokens\":2}},\"usage\":{\"prompt_tokens\":55,\"completion_tokens\":5,\"total_tokens\":60}}\n\n"
        "data: {\"choices\":[],\"x_groq\":{\"usage\":{\"prompt_tokens\":2,\"completion_tokens\":2,\"total_tokens\":4}}}\n\n"
        "data: [DONE]\n\n";
    scripted_server s;
    for (const std::string* st : {&moonshot, &groq, &both}) s.then_stream(*st, 9);
    s.then_json(200, R"({"choices":[{"index":0,"message":{"role":"assistant","content":"好"},"finish_reason":"stop","usage":{"prompt_tokens":44,"completion_tokens":2,"total_tokens":46}}]})");
    ania::openai::client llm(streaming(s));
    auto po = options(s);
    ania::openai::client plain(po);
    const std::vector<message> msgs{message::user("hi")};
    for (const std::int64_t want : {77, 66, 55}) {
        const ania::completion c = llm.complete(one_user(msgs));
        REQUIRE(c.ok);
        CHECK(c.reply.content == "好");
        CHECK(c.used.prompt_tokens == std::optional<std::int64_t>(want));
    }
    const ania::completion c = plain.complete(one_user(msgs));
    REQUIRE(c.ok);
    CHECK(c.used.prompt_tokens == std::optional<std::int64_t>(44));

    // The window gets the real context size from it (SPEC §1), not the estimate.
    s.then_stream(moonshot, 9);
    ania::ram_store store;
    ania::background_writer<ania::ram_store> writer(store);
    ania::basic_agent<http_traits> a(writer, {.client = ania::openai::client(streaming(s))}, "f:1");
    REQUIRE(a.chat("hi").ok());
    CHECK(a.window().last_prompt_tokens() == 77);
}

TEST_CASE("quirks: 429 insufficient_quota is not retried and has its own kind; a rate limit still is", "[openai][errors][quirks]") {
    const std::vector<message> msgs{message::user("hi")};
    const char* quota_bodies[] = {
        R"({"error":{"message":"You exceeded your current quota, please check your plan and billing details.","type":"insufficient_quota","param":null,"code":"insufficient_quota"}})",
        R"({"error":{"message":"quota","type":"requests","code":"insufficient_quota"}})",
        R"({"error":{"message":"You exceeded your current quota.","type":"insufficient_quota"}})",
    };
    for (const char* body : quota_bodies) {
        for (const bool stream : {false, true}) {
            scripted_server s;
            s.otherwise([body](const httplib::Request&, httplib::Response& res) {
                res.status = 429;
                res.set_content(body, "application/json");
            });
            ania::openai::client llm(stream ? streaming(s) : options(s));
            const ania::completion c = llm.complete(one_user(msgs));
            CHECK_FALSE(c.ok);
            CHECK(c.cause.kind == ania::failure_kind::quota_exceeded);
            CHECK(c.cause.http_status == 429);
            CHECK_FALSE(c.cause.retryable);
            CHECK(c.cause.attempts == 1);
            CHECK(s.count() == 1);
            CHECK(ania::to_string(c.cause.kind) == "quota_exceeded");
        }
    }
    // Anthropic's billing error, and its "credit balance is too low".
    for (const char* body : {R"({"type":"error","error":{"type":"billing_error","message":"billing"}})",
                             R"({"type":"error","error":{"type":"invalid_request_error","message":"Your credit balance is too low to access the Anthropic API."}})"}) {
        scripted_server s;
        s.otherwise([body](const httplib::Request&, httplib::Response& res) {
            res.status = 400;
            res.set_content(body, "application/json");
        });
        ania::anthropic::client c(claude(s));
        const ania::completion r = c.complete(one_user(msgs));
        CHECK(r.cause.kind == ania::failure_kind::quota_exceeded);
        CHECK(s.count() == 1);
    }
    // The agent's turn says why, typed, after one request.
    scripted_server s;
    s.otherwise([&](const httplib::Request&, httplib::Response& res) {
        res.status = 429;
        res.set_content(quota_bodies[0], "application/json");
    });
    ania::ram_store store;
    ania::background_writer<ania::ram_store> writer(store);
    ania::basic_agent<http_traits> a(writer, {.client = ania::openai::client(options(s))}, "f:1");
    const ania::chat_result r = a.chat("hi");
    CHECK(r.end == ania::turn_end::failed);
    CHECK(r.failure.kind == ania::failure_kind::quota_exceeded);
    CHECK_FALSE(r.failure.retryable);
    CHECK(s.count() == 1);
}

TEST_CASE("quirks: an error inside a 200 stream is a server failure, retried while no text has been shown", "[anthropic][openai][errors][quirks]") {
    const std::vector<message> msgs{message::user("hi")};
    const std::string start = "event: message_start\ndata: {\"type\":\"message_start\",\"message\":{\"usage\":{\"input_tokens\":3}}}\n\n";
    const std::string overloaded = "event: error\ndata: {\"type\":\"error\",\"error\":{\"type\":\"overloaded_error\",\"message\":\"Overloaded\"}}\n\n";
    const std::string text = "event: content_block_start\ndata: {\"type\":\"content_block_start\",\"index\":0,\"content_block\":{\"type\":\"text\",\"text\":\"\"}}\n\n"
                             "event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"text_delta\",\"text\":\"好\"}}\n\n";
    const std::string end = "event: message_stop\ndata: {\"type\":\"message_stop\"}\n\n";
    {  // overloaded before any text: retried like a 529, then the answer
        scripted_server s;
        s.then_stream(start + overloaded);
        s.then_stream(start + text + end);
        auto o = claude(s);
        o.stream = true;
        std::string shown;
        o.on_text = [&](std::string_view t) { shown += t; };
        ania::anthropic::client c(o);
        const ania::completion r = c.complete(one_user(msgs));
        REQUIRE(r.ok);
        CHECK(r.reply.content == "好");
        CHECK(shown == "好");
        CHECK(r.cause.attempts == 2);
        CHECK(s.count() == 2);
    }
    {  // overloaded for good: typed server, retryable, after the retries
        scripted_server s;
        s.otherwise([&](const httplib::Request&, httplib::Response& res) { res.set_content(start + overloaded, "text/event-stream"); });
        auto o = claude(s);
        o.stream = true;
        o.retry.max_retries = 2;
        ania::anthropic::client c(o);
        const ania::completion r = c.complete(one_user(msgs));
        CHECK_FALSE(r.ok);
        CHECK(r.cause.kind == ania::failure_kind::server);
        CHECK(r.cause.retryable);
        CHECK(r.cause.type == "overloaded_error");
        CHECK(s.count() == 3);
        CHECK(r.error.find("Overloaded") != std::string::npos);
    }
    {  // after text reached on_text: not retried (the user would see it twice), still typed server
        scripted_server s;
        s.then_stream(start + text + overloaded);
        auto o = claude(s);
        o.stream = true;
        o.on_text = [](std::string_view) {};
        ania::anthropic::client c(o);
        const ania::completion r = c.complete(one_user(msgs));
        CHECK_FALSE(r.ok);
        CHECK(r.cause.kind == ania::failure_kind::server);
        CHECK(s.count() == 1);
    }
    // OpenAI-compatible: OpenRouter's mid-stream error chunk (with finish_reason "error"), and a bare
    // finish_reason "error"; a 200 plain body with an error member; all server, retried.
    const std::string openrouter =
        "data: {\"id\":\"o\",\"object\":\"chat.completion.chunk\",\"error\":{\"code\":502,\"message\":\"Provider disconnected\"},"
        "\"choices\":[{\"index\":0,\"delta\":{\"content\":\"\"},\"finish_reason\":\"error\"}]}\n\n";
    const std::string bare = "data: {\"choices\":[{\"index\":0,\"delta\":{},\"finish_reason\":\"error\"}]}\n\n";
    for (const std::string* bad : {&openrouter, &bare}) {
        scripted_server s;
        s.then_stream(*bad);
        s.then_stream(chunk(R"({"content":"ok"})") + "data: [DONE]\n\n");
        ania::openai::client llm(streaming(s));
        const ania::completion r = llm.complete(one_user(msgs));
        REQUIRE(r.ok);
        CHECK(r.reply.content == "ok");
        CHECK(s.count() == 2);
        scripted_server s2;
        s2.otherwise([bad](const httplib::Request&, httplib::Response& res) { res.set_content(*bad, "text/event-stream"); });
        auto o = streaming(s2);
        o.retry.max_retries = 1;
        const ania::completion f = ania::openai::client(o).complete(one_user(msgs));
        CHECK_FALSE(f.ok);
        CHECK(f.cause.kind == ania::failure_kind::server);
        CHECK(f.cause.retryable);
        CHECK(s2.count() == 2);
    }
    {
        scripted_server s;
        s.then_json(200, R"({"error":{"message":"upstream timed out","code":504}})");
        s.then_json(200, answer("ok"));
        ania::openai::client llm(options(s));
        const ania::completion r = llm.complete(one_user(msgs));
        REQUIRE(r.ok);
        CHECK(s.count() == 2);
    }
    // The agent's turn says why, typed.
    scripted_server s;
    s.otherwise([&](const httplib::Request&, httplib::Response& res) { res.set_content(openrouter, "text/event-stream"); });
    ania::ram_store store;
    ania::background_writer<ania::ram_store> writer(store);
    auto o = streaming(s);
    o.retry.max_retries = 0;
    ania::basic_agent<http_traits> a(writer, {.client = ania::openai::client(o)}, "f:1");
    const ania::chat_result r = a.chat("hi");
    CHECK(r.end == ania::turn_end::failed);
    CHECK(r.failure.kind == ania::failure_kind::server);
    CHECK(s.count() == 1);
}

namespace {

/// What stream_accumulator's document path takes from a chunk (the same rules), for comparing the fast reader.
struct doc_fields {
    bool ok = false, saw_choice = false;
    std::optional<std::string> content, reasoning, finish;
};
doc_fields by_document(std::string_view data) {
    doc_fields d;
    ania::json j;
    try {
        j = ania::http::detail::parse_body(data, {});
    } catch (const std::exception&) {
        return d;
    }
    d.ok = true;
    if (!j.is_object()) return d;
    const auto ch = j.find("choices");
    if (ch == j.end() || !ch->is_array()) return d;
    for (const ania::json& choice : *ch) {
        if (!choice.is_object()) continue;
        if (const auto idx = choice.find("index"); idx != choice.end() && idx->is_number_integer() && idx->get<std::int64_t>() != 0) continue;
        d.saw_choice = true;
        if (const auto fr = choice.find("finish_reason"); fr != choice.end() && fr->is_string()) d.finish = fr->get<std::string>();
        const auto dl = choice.find("delta");
        if (dl == choice.end() || !dl->is_object()) continue;
        if (const auto c = dl->find("content"); c != dl->end() && c->is_string()) d.content = c->get<std::string>();
        if (const auto r = dl->find("reasoning_content"); r != dl->end() && r->is_string()) d.reasoning = r->get<std::string>();
    }
    return d;
}

std::string random_piece(std::mt19937& rng) {
    static const char* pieces[] = {"你好", "，", "hello", " world", "\\n", "\\\"", "\\\\", "\\u4f60", "\\u00e9", "\\/", "\\t",
                                   "😀", "a\\u0000b", "\\ud83d\\ude00", "\\x", "\\u12", "</think>", "1e5", ""};
    std::string s;
    for (int k = rng() % 4; k >= 0; --k) s += pieces[rng() % (sizeof(pieces) / sizeof(*pieces))];
    return s;
}

std::string random_chunk(std::mt19937& rng) {
    const auto ws = [&] { return rng() % 4 == 0 ? std::string(" \n") : std::string(); };
    std::string delta = "{";
    std::vector<std::string> dm;
    if (rng() % 5 != 0) dm.push_back(R"("content":)" + (rng() % 6 == 0 ? std::string("null") : "\"" + random_piece(rng) + "\""));
    if (rng() % 4 == 0) dm.push_back(R"("reasoning_content":")" + random_piece(rng) + "\"");
    if (rng() % 3 == 0) dm.push_back(R"("role":"assistant")");
    if (rng() % 8 == 0) dm.push_back(R"("tool_calls":[{"index":0,"id":"c1","function":{"name":"f","arguments":"{}"}}])");
    if (rng() % 10 == 0) dm.push_back(R"("content":"dup")");
    for (std::size_t k = 0; k < dm.size(); ++k) delta += (k ? "," : "") + ws() + dm[k];
    delta += "}";
    std::vector<std::string> cm;
    const char* indexes[] = {"0", "0", "0", "1", "0.0", "\"0\"", "00", "-0"};
    if (rng() % 6 != 0) cm.push_back(std::string(R"("index":)") + indexes[rng() % 8]);
    cm.push_back(R"("delta":)" + (rng() % 12 == 0 ? std::string("null") : delta));
    const char* finishes[] = {"null", "\"stop\"", "\"length\"", "\"error\"", "null"};
    if (rng() % 3 != 0) cm.push_back(std::string(R"("finish_reason":)") + finishes[rng() % 5]);
    if (rng() % 5 == 0) cm.push_back(R"("logprobs":null)");
    std::string choice = "{";
    for (std::size_t k = 0; k < cm.size(); ++k) choice += (k ? "," : "") + ws() + cm[k];
    choice += "}";
    std::vector<std::string> tm{R"("id":"chatcmpl-x")", R"("object":"chat.completion.chunk")", R"("created":1733400000)"};
    const char* extras[] = {R"("model":"m")", R"("system_fingerprint":null)", R"("usage":null)", R"("usage":{"prompt_tokens":1})",
                            R"("error":null)", R"("error":{"message":"x"})", R"("x":[1,-2.5,true,false,{"a":[]}])", R"("n":1e400)",
                            R"("deep":[[[[[[[[[[[[[[[[[[[1]]]]]]]]]]]]]]]]]]])", R"("big":123456789012345678901234)"};
    tm.push_back(extras[rng() % 10]);
    const int nchoices = rng() % 8 == 0 ? 0 : rng() % 10 == 0 ? 2 : 1;
    std::string arr = "[";
    for (int k = 0; k < nchoices; ++k) arr += (k ? "," : "") + choice;
    arr += "]";
    tm.insert(tm.begin() + static_cast<std::ptrdiff_t>(rng() % tm.size()), R"("choices":)" + ws() + arr);
    std::string out = ws() + "{";
    for (std::size_t k = 0; k < tm.size(); ++k) out += (k ? "," : "") + tm[k];
    return out + "}" + ws();
}

} // namespace

TEST_CASE("stream chunks: the fast reader reads a chunk as the document path does, or declines", "[clients][stream][property]") {
    std::mt19937 rng(4242);
    ania::openai::detail::stream_chunk_reader reader;
    std::size_t accepted = 0, declined = 0;
    for (int round = 0; round < 20000; ++round) {
        std::string chunk = random_chunk(rng);
        if (round % 3 == 0) {  // mutated: a byte changed, dropped or doubled (also inside UTF-8 sequences)
            const std::size_t at = rng() % chunk.size();
            switch (rng() % 3) {
            case 0: chunk[at] = static_cast<char>(rng() % 256); break;
            case 1: chunk.erase(at, 1); break;
            default: chunk.insert(at, 1, chunk[at]); break;
            }
        }
        CAPTURE(chunk);
        ania::openai::detail::stream_chunk_reader::fields f;
        if (!reader.read(chunk, {}, f)) {
            ++declined;
            continue;
        }
        ++accepted;
        const doc_fields d = by_document(chunk);
        REQUIRE(d.ok);  // never accepts what the document parser rejects
        CHECK(f.saw_choice == d.saw_choice);
        CHECK(f.content.has_value() == d.content.has_value());
        if (f.content && d.content) CHECK(std::string(*f.content) == *d.content);
        CHECK(f.reasoning.has_value() == d.reasoning.has_value());
        if (f.reasoning && d.reasoning) CHECK(std::string(*f.reasoning) == *d.reasoning);
        CHECK(f.finish_reason.has_value() == d.finish.has_value());
        if (f.finish_reason && d.finish) CHECK(std::string(*f.finish_reason) == *d.finish);
    }
    CHECK(accepted > 2000);  // the fast path is taken for the common shapes
    CHECK(declined > 2000);  // and declines the rest
    // A whole stream through the accumulator equals the same stream read chunk by chunk by the document path.
    std::string expected;
    ania::openai::stream_accumulator acc;
    for (int k = 0; k < 500; ++k) {
        const std::string piece = random_piece(rng);
        const std::string chunk = R"({"choices":[{"index":0,"delta":{"content":")" + piece + R"("},"finish_reason":null}]})";
        const doc_fields d = by_document(chunk);
        if (!d.ok) continue;
        expected += d.content.value_or("");
        acc.add(chunk);
    }
    acc.add(R"({"choices":[{"index":0,"delta":{},"finish_reason":"stop"}],"usage":null})");
    const ania::completion c = std::move(acc).finish();
    REQUIRE(c.ok);
    CHECK(c.reply.content == expected);
    CHECK(c.finish_reason == "stop");
}

TEST_CASE("prompt cache: the turn's stats carry each provider's cached tokens over loopback; Anthropic's breakpoints", "[openai][anthropic][cache]") {
    SECTION("OpenAI prompt_tokens_details.cached_tokens and DeepSeek prompt_cache_hit_tokens, through an agent") {
        scripted_server s;
        s.then_json(200, answer("一", R"(,"usage":{"prompt_tokens":1000,"completion_tokens":2,"total_tokens":1002,"prompt_tokens_details":{"cached_tokens":768}})"));
        s.then_json(200, answer("二", R"(,"usage":{"prompt_tokens":900,"completion_tokens":2,"total_tokens":902,"prompt_cache_hit_tokens":640,"prompt_cache_miss_tokens":260})"));
        ania::ram_store store;
        ania::background_writer<ania::ram_store> writer(store);
        ania::basic_agent<http_traits> a(writer, {.client = ania::openai::client(options(s))}, "f:1", {.system_prompt = "你是 Ania。"});
        ania::chat_result r = a.chat("你好");
        REQUIRE(r.ok());
        CHECK(r.stats.total.cached_prompt_tokens == std::optional<std::int64_t>(768));
        r = a.chat("再来");
        REQUIRE(r.ok());
        CHECK(r.stats.total.cached_prompt_tokens == std::optional<std::int64_t>(640));
    }
    SECTION("Anthropic cache_read_input_tokens through an agent; cache_control on the stable head and the history's end") {
        scripted_server s;
        s.then_json(200, R"({"id":"m1","type":"message","role":"assistant","content":[{"type":"text","text":"好的"}],)"
                         R"("stop_reason":"end_turn","usage":{"input_tokens":20,"cache_read_input_tokens":300,"cache_creation_input_tokens":10,"output_tokens":3}})");
        struct claude_traits : ania::default_agent_traits {
            using client = ania::anthropic::client;
        };
        ania::anthropic::client_options o = claude(s);
        o.cache_prompt = true;
        ania::ram_store store;
        const std::string pfx(ania::summary_prefix_zh);
        // A history whose head is two stacked summaries, as a compaction with stack_summaries leaves it.
        store.append("g:1", std::vector<message>{message::user(pfx + "一"), message::user(pfx + "二"), message::user("问"),
                                                 message::assistant("答")});
        ania::background_writer<ania::ram_store> writer(store);
        ania::basic_agent<claude_traits> a(writer, {.client = ania::anthropic::client(o)}, "g:1", {.system_prompt = "你是 Ania。"});
        const ania::chat_result r = a.chat("继续");
        REQUIRE(r.ok());
        CHECK(r.stats.total.cached_prompt_tokens == std::optional<std::int64_t>(300));
        CHECK(r.stats.total.prompt_tokens == std::optional<std::int64_t>(330));
        // The agent knows no stable head after a load (0): the request's breakpoints are the system prompt and
        // the history's end. With a stable head of 2 the wire adds one on the second summary.
        const json sent = json::parse(s.requests().at(0).body);
        CHECK(sent["system"][0]["cache_control"]["type"] == "ephemeral");
        const std::vector<message> history{message::user(pfx + "一"), message::user(pfx + "二"), message::user("问"),
                                           message::assistant("答")};
        const std::vector<message> turn{message::user("继续")};
        ania::anthropic::body_options bo;
        bo.model = "claude-test";
        bo.cache_prompt = true;
        ania::chat_request req{ania::message_sequence(std::span<const message>{}, std::span<const message>(history), std::span<const message>(turn)),
                               {}, {}, 2};
        const json j = json::parse(ania::anthropic::request_body(req, bo));
        const json& m = j["messages"];
        REQUIRE(m.size() == 3);  // user (both summaries and the question, merged), assistant, user
        REQUIRE(m[0]["content"].size() == 3);
        CHECK_FALSE(m[0]["content"][0].contains("cache_control"));
        CHECK(m[0]["content"][1]["cache_control"]["type"] == "ephemeral");  // the end of the stable head
        CHECK_FALSE(m[0]["content"][2].contains("cache_control"));
        CHECK(m[1]["content"][0]["cache_control"]["type"] == "ephemeral");  // the end of the history
        CHECK_FALSE(m[2]["content"][0].contains("cache_control"));
        req.stable_prefix = 0;
        const json none = json::parse(ania::anthropic::request_body(req, bo));
        CHECK_FALSE(none["messages"][0]["content"][1].contains("cache_control"));
        bo.cache_prompt = false;
        req.stable_prefix = 2;
        CHECK(ania::anthropic::request_body(req, bo).find("cache_control") == std::string::npos);
    }
}
