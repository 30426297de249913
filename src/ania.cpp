// src/ania.cpp -- the compiled library of ania's core (dependency('ania-compiled')): every definition the
// headers only declare in compiled mode, and the shipped specializations of its templates, compiled once.
// SPDX-License-Identifier: MIT
// One translation unit, so that the library's own calls between its parts stay inlinable.
#define ANIA_BUILDING_LIBRARY  // the -inl headers are this library's to include
#include <ania/ania.hpp>

#include <ania/agent/hooks-inl.hpp>
#include <ania/agent/images-inl.hpp>
#include <ania/agent/tool_registry-inl.hpp>
#include <ania/compressor/llm_summary-inl.hpp>
#include <ania/compressor/truncate_oldest_half-inl.hpp>
#include <ania/config/io-inl.hpp>
#include <ania/context/maybe_compress-inl.hpp>
#include <ania/context/token_counter-inl.hpp>
#include <ania/history/archive_search-inl.hpp>
#include <ania/history/persist-inl.hpp>
#include <ania/log-inl.hpp>
#include <ania/memory/index-inl.hpp>
#include <ania/memory/indexer-inl.hpp>
#include <ania/memory/manager-inl.hpp>
#include <ania/memory/ram_backend-inl.hpp>
#include <ania/memory/scope-inl.hpp>
#include <ania/memory/scope_index-inl.hpp>
#include <ania/memory/similarity-inl.hpp>
#include <ania/memory/tokenize-inl.hpp>
#include <ania/memory/tools-inl.hpp>
#include <ania/session/eviction-inl.hpp>
#include <ania/store/ram_store-inl.hpp>
#include <ania/text/shared_text-inl.hpp>
#include <ania/tool-inl.hpp>
#include <ania/transcript-inl.hpp>

namespace ania {

template class token_window<char_class_counter>;
template class background_writer<ram_store>;

namespace memory {
template class basic_manager<default_memory_traits>;
template std::vector<tool> detail::make_memory_tools(detail::memory_ops, const scope&, tool_replies);
} // namespace memory

} // namespace ania
