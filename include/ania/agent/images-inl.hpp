// ania/agent/images-inl.hpp -- the definitions of <ania/agent/images.hpp>.
// Header-only mode includes this from there; compiled mode compiles it once, in the library (see
// <ania/detail/linkage.hpp>).
// SPDX-License-Identifier: MIT
#pragma once

#include <ania/detail/linkage.hpp>
#if !ANIA_HEADER_ONLY && !defined(ANIA_BUILDING_LIBRARY)
static_assert(false, "compiled mode: the library defines what <ania/agent/images-inl.hpp> defines; include <ania/agent/images.hpp>");
#endif

#include <ania/agent/images.hpp>

namespace ania {

ANIA_INLINE auto multimodal::from_tool(std::vector<std::string> images, const log_sink&) -> tool_images {
    tool_images out;
    if (images.empty()) return out;
    std::vector<content_part> parts;
    parts.push_back(content_part::make_text(tool_images_text.str()));
    for (std::string& url : images) parts.push_back(content_part::make_image(std::move(url)));
    out.next_round = message::user(std::move(parts));
    return out;
}

} // namespace ania
