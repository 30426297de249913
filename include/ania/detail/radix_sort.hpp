// ania/detail/radix_sort.hpp -- a stable LSD radix sort by an unsigned key, for thousands of pointers at once.
// SPDX-License-Identifier: MIT
#pragma once

#include <algorithm>
#include <array>
#include <cstddef>
#include <cstdint>
#include <utility>
#include <vector>

namespace ania::detail {

/// Sorts `v` by `key(element)` (an unsigned integer), stable, using `scratch` (resized; its capacity is kept
/// by a caller that reuses it). Only the bits where the keys differ are sorted: 11 bits a pass over
/// key - min(key), so 10,000 heap addresses a few megabytes apart take two or three passes of two linear
/// walks, where std::sort makes ~130,000 comparisons (the janitor sorts the agents it destroys by address).
template <class T, class Key>
void radix_sort_by(std::vector<T>& v, std::vector<T>& scratch, Key key) {
    constexpr unsigned digit_bits = 11;
    constexpr std::size_t buckets = std::size_t{1} << digit_bits;
    if (v.size() < 2) return;
    if (v.size() < 64) {  // a few: comparisons are cheaper than the passes
        std::stable_sort(v.begin(), v.end(), [&](const T& a, const T& b) { return key(a) < key(b); });
        return;
    }
    auto lo = key(v.front()), hi = lo;
    for (const T& x : v) {
        const auto k = key(x);
        lo = std::min(lo, k);
        hi = std::max(hi, k);
    }
    using key_type = decltype(lo);
    const key_type span = static_cast<key_type>(hi - lo);
    scratch.resize(v.size());
    std::array<std::size_t, buckets + 1> count{};
    for (unsigned shift = 0; shift < sizeof(key_type) * 8 && (span >> shift) != 0; shift += digit_bits) {
        count.fill(0);
        const auto digit = [&](const T& x) { return static_cast<std::size_t>((static_cast<key_type>(key(x) - lo) >> shift) & (buckets - 1)); };
        for (const T& x : v) ++count[digit(x) + 1];
        for (std::size_t b = 1; b <= buckets; ++b) count[b] += count[b - 1];
        for (T& x : v) scratch[count[digit(x)]++] = std::move(x);
        v.swap(scratch);
    }
    scratch.clear();  // moved-from elements: nothing is held twice
}

} // namespace ania::detail
