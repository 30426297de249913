#!/usr/bin/env bash
# scripts/gen_unicode_tables.sh -- regenerates include/ania/text/unicode_tables.hpp from ICU (libicu-dev).
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
g++ -std=c++20 -O1 -o "$tmp/gen" "$root/scripts/gen_unicode_tables.cpp" $(pkg-config --cflags --libs icu-uc)
"$tmp/gen" >"$tmp/out.hpp"
mv "$tmp/out.hpp" "$root/include/ania/text/unicode_tables.hpp"
