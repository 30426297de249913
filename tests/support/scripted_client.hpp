// tests/support/scripted_client.hpp -- the tests' name for the public SCRIPTED client (no LLM, no network).
#pragma once

#include <ania/testing/scripted_client.hpp>

namespace ania_test {
using ania::testing::scripted_client;
using ania::testing::scripted_throw;
} // namespace ania_test
