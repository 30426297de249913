#!/usr/bin/env bash
# scripts/compile_time.sh -- how long g++ -O0 takes for a TU that includes only <nlohmann/json.hpp>, one that
# includes <ania/ania.hpp>, tests/compile_time/quickstart_types.cpp (every part the quickstart composes,
# constructed), quickstart_agent.cpp (the same with its agent, and one turn), examples/quickstart.cpp (with
# its printing too: the JSON API) and examples/hello_bot.cpp (the README's first bot), each in header-only mode and in
# compiled mode (-DANIA_COMPILED_LIB: what a user of dependency('ania-compiled') compiles; for hello_bot also
# -DANIA_COMPILED_BOT, dependency('ania-bot-compiled')); median of 3 runs
# each, and the ratios to the nlohmann-only TU. Not part of the test suite (a timing is not an assertion); run
# it before and after a change to the headers.
# `--trace`: instead, one clang++ -ftime-trace compilation of each TU, and where the time goes (parsing,
# instantiation, code generation) with the costliest instantiations the ania TUs add to the nlohmann-only one.
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
printf '#include <nlohmann/json.hpp>\nint main() {}\n' >"$tmp/nlohmann_only.cpp"
printf '#include <ania/ania.hpp>\nint main() {}\n' >"$tmp/ania_only.cpp"
cp "$root/tests/compile_time/quickstart_types.cpp" "$root/tests/compile_time/quickstart_agent.cpp" "$tmp/"
median() {  # FILE [FLAGS...]: seconds, median of three compilations
  local f=$1
  shift
  for _ in 1 2 3; do
    /usr/bin/time -f %e g++ -std=c++20 -O0 -I"$root/include" "$@" -c "$f" -o /dev/null 2>&1 >/dev/null | tail -1
  done | sort -n | sed -n 2p
}
if [[ "${1:-}" == --trace ]]; then
  for f in nlohmann_only ania_only quickstart_types; do
    (cd "$tmp" && clang++ -std=c++20 -O0 -I"$root/include" -ftime-trace -c "$f.cpp" -o "$f.o")
  done
  python3 - "$tmp" <<'PY'
import collections, json, sys
def load(name):
    events = [e for e in json.load(open(f"{sys.argv[1]}/{name}.json"))["traceEvents"] if e.get("ph") == "X"]
    totals, inst = collections.Counter(), collections.Counter()
    for e in events:
        if e["name"].startswith("Total "):
            totals[e["name"][6:]] += e["dur"] / 1e6
        if e["name"] in ("InstantiateFunction", "InstantiateClass"):
            inst[e["args"]["detail"][:120]] += e["dur"] / 1e3
    return totals, inst
tus = {n: load(n) for n in ("nlohmann_only", "ania_only", "quickstart_types")}
cols = ("ExecuteCompiler", "Source", "ParseClass", "InstantiateFunction", "InstantiateClass", "Backend")
print(f"{'':18}" + "".join(f"{c:>20}" for c in cols) + "   (seconds; the phases nest)")
for n, (t, _) in tus.items():
    print(f"{n:18}" + "".join(f"{t[c]:20.2f}" for c in cols))
for n, base in (("ania_only", "nlohmann_only"), ("quickstart_types", "ania_only")):
    added = collections.Counter({k: v - tus[base][1].get(k, 0) for k, v in tus[n][1].items()})
    print(f"\n{n}: the costliest instantiations {base} does not have (ms)")
    for k, v in added.most_common(15):
        print(f"{v:8.0f}  {k}")
PY
  exit 0
fi
base=$(median "$tmp/nlohmann_only.cpp")
printf '%-34s %6s s\n' nlohmann_only "$base"
for mode in header-only compiled; do
  flags=()
  [[ $mode == compiled ]] && flags=(-DANIA_COMPILED_LIB)
  for f in ania_only quickstart_types quickstart_agent; do
    t=$(median "$tmp/$f.cpp" "${flags[@]}")
    printf '%-34s %6s s  %s x\n' "$f ($mode)" "$t" "$(python3 -c "print(f'{$t / $base:.2f}')")"
  done
  # The quickstart itself: its agent (basic_agent over its traits), its printing (the JSON API) and all.
  t=$(median "$root/examples/quickstart.cpp" "${flags[@]}")
  printf '%-34s %6s s  %s x\n' "examples/quickstart.cpp ($mode)" "$t" "$(python3 -c "print(f'{$t / $base:.2f}')")"
  # The README's first bot: ania::bot (openai::client over one SQLite file, memory, sessions); in compiled mode
  # with ANIA_COMPILED_BOT too, as dependency('ania-bot-compiled') gives it (the bot instantiated in its library).
  [[ $mode == compiled ]] && flags+=(-DANIA_COMPILED_BOT)
  t=$(median "$root/examples/hello_bot.cpp" "${flags[@]}")
  printf '%-34s %6s s  %s x\n' "examples/hello_bot.cpp ($mode)" "$t" "$(python3 -c "print(f'{$t / $base:.2f}')")"
done
