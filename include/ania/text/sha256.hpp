// ania/text/sha256.hpp -- SHA-256 (FIPS 180-4) and the short hash that names images in markers.
// SPDX-License-Identifier: MIT
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace ania::text {

/// Incremental SHA-256. Self-contained so that the core needs no crypto library for one hash.
class sha256 {
public:
    using digest_type = std::array<std::uint8_t, 32>;

    sha256() noexcept = default;

    sha256& update(std::string_view data) noexcept {
        for (const char ch : data) {
            buffer_[buffered_++] = static_cast<std::uint8_t>(ch);
            if (buffered_ == 64) {
                compress(buffer_.data());
                buffered_ = 0;
            }
        }
        length_ += data.size();
        return *this;
    }

    [[nodiscard]] digest_type finish() noexcept {
        const std::uint64_t bits = length_ * 8;
        buffer_[buffered_++] = 0x80;
        if (buffered_ > 56) {
            while (buffered_ < 64) buffer_[buffered_++] = 0;
            compress(buffer_.data());
            buffered_ = 0;
        }
        while (buffered_ < 56) buffer_[buffered_++] = 0;
        for (int i = 7; i >= 0; --i) buffer_[buffered_++] = static_cast<std::uint8_t>(bits >> (i * 8));
        compress(buffer_.data());
        digest_type out{};
        for (std::size_t i = 0; i < 8; ++i)
            for (std::size_t b = 0; b < 4; ++b) out[i * 4 + b] = static_cast<std::uint8_t>(h_[i] >> (24 - 8 * b));
        return out;
    }

private:
    static constexpr std::uint32_t rotr(std::uint32_t x, int n) noexcept { return (x >> n) | (x << (32 - n)); }

    void compress(const std::uint8_t* block) noexcept {
        static constexpr std::uint32_t k[64] = {
            0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5, 0x3956c25b, 0x59f111f1, 0x923f82a4, 0xab1c5ed5,
            0xd807aa98, 0x12835b01, 0x243185be, 0x550c7dc3, 0x72be5d74, 0x80deb1fe, 0x9bdc06a7, 0xc19bf174,
            0xe49b69c1, 0xefbe4786, 0x0fc19dc6, 0x240ca1cc, 0x2de92c6f, 0x4a7484aa, 0x5cb0a9dc, 0x76f988da,
            0x983e5152, 0xa831c66d, 0xb00327c8, 0xbf597fc7, 0xc6e00bf3, 0xd5a79147, 0x06ca6351, 0x14292967,
            0x27b70a85, 0x2e1b2138, 0x4d2c6dfc, 0x53380d13, 0x650a7354, 0x766a0abb, 0x81c2c92e, 0x92722c85,
            0xa2bfe8a1, 0xa81a664b, 0xc24b8b70, 0xc76c51a3, 0xd192e819, 0xd6990624, 0xf40e3585, 0x106aa070,
            0x19a4c116, 0x1e376c08, 0x2748774c, 0x34b0bcb5, 0x391c0cb3, 0x4ed8aa4a, 0x5b9cca4f, 0x682e6ff3,
            0x748f82ee, 0x78a5636f, 0x84c87814, 0x8cc70208, 0x90befffa, 0xa4506ceb, 0xbef9a3f7, 0xc67178f2};
        std::uint32_t w[64];
        for (int i = 0; i < 16; ++i)
            w[i] = (std::uint32_t{block[i * 4]} << 24) | (std::uint32_t{block[i * 4 + 1]} << 16) |
                   (std::uint32_t{block[i * 4 + 2]} << 8) | std::uint32_t{block[i * 4 + 3]};
        for (int i = 16; i < 64; ++i) {
            const std::uint32_t s0 = rotr(w[i - 15], 7) ^ rotr(w[i - 15], 18) ^ (w[i - 15] >> 3);
            const std::uint32_t s1 = rotr(w[i - 2], 17) ^ rotr(w[i - 2], 19) ^ (w[i - 2] >> 10);
            w[i] = w[i - 16] + s0 + w[i - 7] + s1;
        }
        std::uint32_t a = h_[0], b = h_[1], c = h_[2], d = h_[3], e = h_[4], f = h_[5], g = h_[6], h = h_[7];
        for (int i = 0; i < 64; ++i) {
            const std::uint32_t t1 = h + (rotr(e, 6) ^ rotr(e, 11) ^ rotr(e, 25)) + ((e & f) ^ (~e & g)) + k[i] + w[i];
            const std::uint32_t t2 = (rotr(a, 2) ^ rotr(a, 13) ^ rotr(a, 22)) + ((a & b) ^ (a & c) ^ (b & c));
            h = g; g = f; f = e; e = d + t1; d = c; c = b; b = a; a = t1 + t2;
        }
        h_[0] += a; h_[1] += b; h_[2] += c; h_[3] += d; h_[4] += e; h_[5] += f; h_[6] += g; h_[7] += h;
    }

    std::array<std::uint32_t, 8> h_{0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a,
                                    0x510e527f, 0x9b05688c, 0x1f83d9ab, 0x5be0cd19};
    std::array<std::uint8_t, 64> buffer_{};
    std::size_t buffered_ = 0;
    std::uint64_t length_ = 0;
};

/// Lower-case hex of the first `bytes` bytes of a digest.
[[nodiscard]] inline std::string to_hex(const sha256::digest_type& d, std::size_t bytes = 32) {
    static constexpr char digits[] = "0123456789abcdef";
    std::string out;
    out.reserve(bytes * 2);
    for (std::size_t i = 0; i < bytes && i < d.size(); ++i) {
        out.push_back(digits[d[i] >> 4]);
        out.push_back(digits[d[i] & 0xF]);
    }
    return out;
}

/// Full SHA-256 of `data` as 64 lower-case hex digits.
[[nodiscard]] inline std::string sha256_hex(std::string_view data) { return to_hex(sha256{}.update(data).finish()); }

/// The stable short hash of an image reference (URL or data URI): the first 8 hex digits of its SHA-256
/// (SPEC §2), the name an image has in `[图片 <hash>]` markers and in the conversation text.
[[nodiscard]] inline std::string short_hash(std::string_view data) { return to_hex(sha256{}.update(data).finish(), 4); }

} // namespace ania::text
