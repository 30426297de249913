// ania/openai/embedder.hpp -- a memory::embedder over an OpenAI-compatible /embeddings endpoint (libcurl).
// SPDX-License-Identifier: MIT
//
//     ania::openai::embedder e({.base_url = url, .api_key = key, .model = "text-embedding-3-small"});
//     std::optional<std::vector<float>> v = e.embed("text");   // nullopt: memory degrades to keywords
//
// Same transport, retries, timeouts and key handling as openai::client; thread-safe the same way. A vector
// of the wrong dimension, or with a value that is not finite, is an error, never a vector: one bad answer
// must not poison a similarity index.
#pragma once

#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <atomic>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <ania/concepts.hpp>
#include <ania/http/call.hpp>
#include <ania/http/curl.hpp>
#include <ania/http/retry.hpp>
#include <ania/json.hpp>
#include <ania/json_writer.hpp>
#include <ania/log.hpp>
#include <ania/memory/concepts.hpp>
#include <ania/openai/client.hpp>
#include <ania/openai/wire.hpp>
#include <ania/text/utf8.hpp>

namespace ania::openai {

struct embedder_options {
    std::string base_url{"https://api.openai.com/v1"};  ///< ".../embeddings" is appended
    std::string api_key{};
    std::string model{};
    /// The expected length of every vector; 0: learnt from the first answer, then required of every later one.
    std::size_t dimensions = 0;
    bool send_dimensions = false;  ///< also ask for `dimensions` (text-embedding-3-* can shorten)
    bool base64 = false;           ///< encoding_format "base64": little-endian float32, a third of the bytes
    std::size_t batch = 64;        ///< texts per request in embed_batch
    http::timeouts timeouts{};
    http::retry_options retry{};
    std::size_t max_answer_bytes = std::size_t(64) << 20;
    log_sink log{};
};

/// What embed_batch returns: one vector per text, in order, or the failure.
struct embeddings {
    bool ok = false;
    std::vector<std::vector<float>> vectors;
    ania::usage used;
    std::string error;
    call_failure cause{};
};

namespace detail {

[[nodiscard]] inline bool decode_base64_floats(std::string_view s, std::vector<float>& out) {
    static constexpr auto value = [](char c) -> int {
        if (c >= 'A' && c <= 'Z') return c - 'A';
        if (c >= 'a' && c <= 'z') return c - 'a' + 26;
        if (c >= '0' && c <= '9') return c - '0' + 52;
        if (c == '+' || c == '-') return 62;
        if (c == '/' || c == '_') return 63;
        return -1;
    };
    while (!s.empty() && s.back() == '=') s.remove_suffix(1);
    std::vector<unsigned char> bytes;
    bytes.reserve(s.size() * 3 / 4);
    std::uint32_t acc = 0;
    int bits = 0;
    for (const char c : s) {
        const int v = value(c);
        if (v < 0) return false;
        acc = (acc << 6) | static_cast<std::uint32_t>(v);
        bits += 6;
        if (bits >= 8) {
            bits -= 8;
            bytes.push_back(static_cast<unsigned char>((acc >> bits) & 0xFF));
        }
    }
    if (bytes.size() % 4 != 0) return false;
    out.resize(bytes.size() / 4);
    for (std::size_t i = 0; i < out.size(); ++i) {
        const std::uint32_t u = static_cast<std::uint32_t>(bytes[4 * i]) | static_cast<std::uint32_t>(bytes[4 * i + 1]) << 8 |
                                static_cast<std::uint32_t>(bytes[4 * i + 2]) << 16 | static_cast<std::uint32_t>(bytes[4 * i + 3]) << 24;
        std::memcpy(&out[i], &u, 4);
    }
    return true;
}

} // namespace detail

class embedder {
public:
    explicit embedder(embedder_options opt)
        : opt_(std::move(opt)), pool_(std::make_shared<http::handle_pool>()), dims_(std::make_shared<std::atomic<std::size_t>>(opt_.dimensions)) {
        call_.url = http::endpoint(opt_.base_url, "/embeddings");
        call_.headers.push_back("Content-Type: application/json");
        if (!opt_.api_key.empty()) call_.headers.push_back("Authorization: Bearer " + opt_.api_key);
        call_.limits = opt_.timeouts;
        call_.max_answer_bytes = opt_.max_answer_bytes;
        if (opt_.batch == 0) opt_.batch = 1;
    }

    /// The memory::embedder contract: one vector, or nullopt (logged) when the service cannot give one.
    [[nodiscard]] std::optional<std::vector<float>> embed(std::string_view text) {
        const std::string_view one[] = {text};
        embeddings r = embed_batch(one);
        if (!r.ok || r.vectors.size() != 1) {
            log_to(opt_.log, log_level::warn, "embedding failed: " + r.error);
            return std::nullopt;
        }
        return std::move(r.vectors.front());
    }

    /// Many texts, `batch` per request; all or nothing.
    [[nodiscard]] embeddings embed_batch(std::span<const std::string_view> texts, const std::stop_token& stop = {}) {
        embeddings all;
        all.vectors.reserve(texts.size());
        for (std::size_t at = 0; at < texts.size(); at += opt_.batch) {
            embeddings part = one_request(texts.subspan(at, std::min(opt_.batch, texts.size() - at)), stop);
            all.used += part.used;
            if (!part.ok) {
                part.used = all.used;
                part.vectors.clear();
                return part;
            }
            for (auto& v : part.vectors) all.vectors.push_back(std::move(v));
        }
        all.ok = true;
        return all;
    }

    [[nodiscard]] std::size_t dimensions() const noexcept { return dims_->load(); }

private:
    [[nodiscard]] embeddings one_request(std::span<const std::string_view> texts, const std::stop_token& stop) {
        std::string body = R"({"model":)";
        ania::detail::append_json_string(body, text::repair_utf8(opt_.model));
        body += R"(,"input":[)";
        for (std::size_t i = 0; i < texts.size(); ++i) {
            if (i) body.push_back(',');
            ania::detail::append_json_string(body, text::is_valid_utf8(texts[i]) ? std::string(texts[i]) : text::repair_utf8(texts[i]));
        }
        body.push_back(']');
        if (opt_.base64) body += R"(,"encoding_format":"base64")";
        if (opt_.send_dimensions && opt_.dimensions) body += R"(,"dimensions":)" + std::to_string(opt_.dimensions);
        body.push_back('}');

        embeddings out;
        completion c = http::with_retries(opt_.retry, stop, opt_.log, opt_.api_key, [&] {
            return call_.plain(
                *pool_, body, stop, [](int status, std::string_view b) { return error_answer(status, b); },
                [&](std::string_view b, const parse_limits&) {
                    std::string why = read_answer(b, texts.size(), out);
                    return why.empty() ? completion::success({}, out.used) : malformed_answer(std::move(why));
                });
        });
        if (!c.ok) {
            out.vectors.clear();
            out.error = std::move(c.error);
            out.cause = std::move(c.cause);
            return out;
        }
        out.ok = true;
        return out;
    }

    /// Fills `out.vectors` (in `index` order) and usage; a non-empty return says why the answer is unusable.
    [[nodiscard]] std::string read_answer(std::string_view body, std::size_t n, embeddings& out) {
        out.vectors.assign(n, {});
        json j;
        try {
            parse_limits lim;
            lim.max_bytes = opt_.max_answer_bytes;
            j = ania::http::detail::parse_body(body, lim);
        } catch (const std::exception& e) {
            return e.what();
        }
        if (!j.is_object() || !j.contains("data") || !j["data"].is_array()) return "no data array";
        if (const auto u = j.find("usage"); u != j.end() && u->is_object()) {
            try {
                out.used = usage_from_json(*u);
            } catch (const std::exception&) {
            }
        }
        const json& data = j["data"];
        if (data.size() != n) return "expected " + std::to_string(n) + " embeddings, got " + std::to_string(data.size());
        std::vector<bool> seen(n, false);
        for (std::size_t k = 0; k < data.size(); ++k) {
            const json& d = data[k];
            if (!d.is_object()) return "an embedding is not an object";
            std::size_t idx = k;
            if (const auto i = d.find("index"); i != d.end()) {
                if (!i->is_number_unsigned() && !i->is_number_integer()) return "an index is not a number";
                const std::int64_t v = i->get<std::int64_t>();
                if (v < 0 || static_cast<std::uint64_t>(v) >= n) return "index " + std::to_string(v) + " out of range";
                idx = static_cast<std::size_t>(v);
            }
            if (seen[idx]) return "index " + std::to_string(idx) + " twice";
            seen[idx] = true;
            const auto e = d.find("embedding");
            if (e == d.end()) return "an entry has no embedding";
            std::vector<float>& v = out.vectors[idx];
            if (e->is_string()) {
                if (!detail::decode_base64_floats(e->get_ref<const std::string&>(), v)) return "an embedding is not base64 float32";
            } else if (e->is_array()) {
                v.reserve(e->size());
                for (const json& x : *e) {
                    if (!x.is_number()) return "an embedding holds a non-number";
                    const double d = x.get<double>();  // checked before narrowing: an out-of-range cast is UB
                    if (!(std::fabs(d) <= static_cast<double>(std::numeric_limits<float>::max())))
                        return "an embedding holds a value that is not a finite float";
                    v.push_back(static_cast<float>(d));
                }
            } else {
                return "an embedding is neither an array nor base64";
            }
            for (const float x : v)
                if (!std::isfinite(x)) return "an embedding holds a value that is not finite";
            if (v.empty()) return "an embedding is empty";
            std::size_t want = dims_->load();
            if (want == 0 && dims_->compare_exchange_strong(want, v.size())) want = v.size();
            if (v.size() != want)
                return "an embedding has " + std::to_string(v.size()) + " dimensions, expected " + std::to_string(want);
        }
        return {};
    }

    embedder_options opt_;
    std::shared_ptr<http::handle_pool> pool_;
    std::shared_ptr<std::atomic<std::size_t>> dims_;
    http::endpoint_call call_;
};

static_assert(memory::embedder<embedder>);

} // namespace ania::openai
