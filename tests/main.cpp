// tests/main.cpp -- the only Catch2 main, built once as a static library.
#define CATCH_CONFIG_MAIN
#include <catch2/catch.hpp>
