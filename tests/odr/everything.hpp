// Included by both ODR translation units: every public header, and a use of each inline entity kind.
#pragma once
#include <ania/ania.hpp>
#include <ania/json.hpp>  // compiled mode: the JSON API is not in the umbrella
#ifdef ANIA_TEST_SQLITE
#include <ania/store/sqlite_store.hpp>
#endif
#ifdef ANIA_TEST_OPENAI
#include <ania/openai/client.hpp>
#include <ania/openai/embedder.hpp>
#endif
#include <string>

std::string tu1_dump();
std::string tu2_dump();
