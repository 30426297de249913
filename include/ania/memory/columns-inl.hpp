// ania/memory/columns-inl.hpp -- the definitions of <ania/memory/columns.hpp>.
// Header-only mode includes this from there; compiled mode compiles it once, in the library (see
// <ania/detail/linkage.hpp>).
// SPDX-License-Identifier: MIT
#pragma once

#include <ania/detail/linkage.hpp>
#if !ANIA_HEADER_ONLY && !defined(ANIA_BUILDING_LIBRARY)
static_assert(false, "compiled mode: the library defines what <ania/memory/columns-inl.hpp> defines; include <ania/memory/columns.hpp>");
#endif

#include <ania/json.hpp>
#include <ania/memory/columns.hpp>

namespace ania::memory::detail {

ANIA_INLINE std::string decode_columns(std::string_view tags_text, std::string_view emb_text, entry& e) {
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
