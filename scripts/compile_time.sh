#!/usr/bin/env bash
# scripts/compile_time.sh -- how long g++ -O0 takes for a TU that includes only <nlohmann/json.hpp>, one that
# includes <ania/ania.hpp>, and tests/compile_time/quickstart_types.cpp (every type the quickstart composes,
# constructed); median of 3 runs each, and the ratios to the nlohmann-only TU. Not part of the test suite
# (a timing is not an assertion); run it before and after a change to the headers.
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
printf '#include <nlohmann/json.hpp>\nint main() {}\n' >"$tmp/nlohmann_only.cpp"
printf '#include <ania/ania.hpp>\nint main() {}\n' >"$tmp/ania_only.cpp"
cp "$root/tests/compile_time/quickstart_types.cpp" "$tmp/quickstart_types.cpp"
median() {  # FILE: seconds, median of three compilations
  for _ in 1 2 3; do
    /usr/bin/time -f %e g++ -std=c++20 -O0 -I"$root/include" -c "$1" -o /dev/null 2>&1 >/dev/null | tail -1
  done | sort -n | sed -n 2p
}
base=$(median "$tmp/nlohmann_only.cpp")
printf '%-22s %6s s\n' nlohmann_only "$base"
for f in ania_only quickstart_types; do
  t=$(median "$tmp/$f.cpp")
  printf '%-22s %6s s  %s x\n' "$f" "$t" "$(python3 -c "print(f'{$t / $base:.2f}')")"
done
