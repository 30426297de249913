// src/sqlite.cpp -- the compiled library of ania's SQLite parts (dependency('ania-sqlite-compiled')): the
// history store, the memory backend and the shipped templates over them, compiled once.
// SPDX-License-Identifier: MIT
#define ANIA_BUILDING_LIBRARY  // the -inl headers are this library's to include
#include <ania/memory/sqlite_backend.hpp>
#include <ania/store/sqlite_store.hpp>

#include <ania/detail/sqlite-inl.hpp>
#include <ania/memory/columns-inl.hpp>
#include <ania/memory/manager-inl.hpp>
#include <ania/memory/sqlite_backend-inl.hpp>
#include <ania/store/sqlite_store-inl.hpp>

namespace ania {

template class background_writer<sqlite_store>;

namespace memory {
template class basic_manager<sqlite_memory_traits>;
} // namespace memory

} // namespace ania
