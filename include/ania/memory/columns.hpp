// ania/memory/columns.hpp -- the tags and vector columns of a stored memory row, read back defensively (a row
// written by another tool or version never fails a load). Shared by the SQL backends.
// SPDX-License-Identifier: MIT
#pragma once

#include <cmath>
#include <string>
#include <string_view>

#include <ania/error.hpp>
#include <ania/json.hpp>
#include <ania/memory/entry.hpp>
#include <ania/text/utf8.hpp>

namespace ania::memory::detail {

/// The tags and emb columns of a stored row into `e` (tags: strings of a JSON array; emb: finite float
/// components of a JSON array). A column that is not that is left out of `e`, and the reason returned
/// ("" when both were fine): a row written by another tool never fails a load.
inline std::string decode_columns(std::string_view tags_text, std::string_view emb_text, entry& e) {
    std::string bad;
    try {
        const json tags = parse_json(tags_text);
        if (tags.is_array())
            for (const json& t : tags)
                if (t.is_string()) e.tags.push_back(text::repair_utf8(t.get_ref<const std::string&>()));
    } catch (const std::exception& ex) {
        e.tags.clear();
        bad = std::string("tags: ") + ex.what();
    }
    try {
        const json emb = parse_json(emb_text);
        if (emb.is_array())
            for (const json& x : emb) {
                if (!x.is_number()) continue;
                const double v = x.get<double>();
                if (!std::isfinite(v) || std::abs(v) > 3.0e38) throw error(errc::invalid_argument, "a vector component out of range");
                e.embedding.push_back(static_cast<float>(v));
            }
    } catch (const std::exception& ex) {
        e.embedding.clear();
        bad += (bad.empty() ? "emb: " : "; emb: ") + std::string(ex.what());
    }
    return bad;
}
} // namespace ania::memory::detail
