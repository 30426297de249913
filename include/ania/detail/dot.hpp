// ania/detail/dot.hpp -- dot products of embeddings (the kernels and their dispatch: detail/simd.hpp).
// SPDX-License-Identifier: MIT
#pragma once

#include <algorithm>
#include <vector>

#include <ania/detail/simd.hpp>

namespace ania::detail {

[[nodiscard]] inline float dot(const std::vector<float>& a, const std::vector<float>& b) noexcept {
    return dot(a.data(), b.data(), std::min(a.size(), b.size()));
}

} // namespace ania::detail
