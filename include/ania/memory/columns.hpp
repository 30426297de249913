// ania/memory/columns.hpp -- the tags and vector columns of a stored memory row, read back defensively (a row
// written by another tool or version never fails a load). Shared by the SQL backends.
// SPDX-License-Identifier: MIT
#pragma once

#include <cmath>
#include <string>
#include <string_view>

#include <ania/detail/linkage.hpp>
#include <ania/error.hpp>
#include <ania/memory/entry.hpp>
#include <ania/text/utf8.hpp>

namespace ania::memory::detail {

/// The tags and emb columns of a stored row into `e` (tags: strings of a JSON array; emb: finite float
/// components of a JSON array). A column that is not that is left out of `e`, and the reason returned
/// ("" when both were fine): a row written by another tool never fails a load.
ANIA_INLINE std::string decode_columns(std::string_view tags_text, std::string_view emb_text, entry& e);
} // namespace ania::memory::detail

#if ANIA_HEADER_ONLY
#include <ania/memory/columns-inl.hpp>
#endif
