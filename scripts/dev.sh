#!/usr/bin/env bash
# scripts/dev.sh -- the project's commands. Each sets everything up first (scripts/setup.sh).
#   scripts/dev.sh example   build and run the quickstart: a conversation persisted in build/quickstart.db
#   scripts/dev.sh test      the whole test suite: g++ -Og and clang++ (ASan+UBSan) with -Werror, the threaded
#                            tests under TSan, the consumer projects, the fuzzers; ends with "N passed, N failed"
#   scripts/dev.sh quick     the test suite once, with g++ only (for the edit-compile loop)
#   scripts/dev.sh bench     release build, then every benchmark on the vendored data set ($ANIA_BENCH_DATA)
#   scripts/dev.sh bench-compare ANCHORS [rounds]  the benchmarks that have an anchor next to the Go and JS
#                            anchors in ANCHORS (go/, js/), alternating, medians of rounds (3), ratios; chart in
#                            docs/bench-compare.svg (scripts/bench_compare.py; installs golang-go and npm)
#   scripts/dev.sh fuzz [s]  libFuzzer (clang, ASan+UBSan): each target for s seconds (default 30) from its corpus
#   scripts/dev.sh coverage  g++ --coverage build, the unit tests, then line and branch coverage of include/ania
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$root"
bash scripts/setup.sh

cmd=${1:-test}
out=build

# configure DIR COMPILER [meson options...]: set up once, reconfigure when options change.
configure() {
  local dir=$1 cxx=$2
  shift 2
  if [ -f "$dir/build.ninja" ]; then
    meson setup --reconfigure "$dir" "$@" >/dev/null  # (meson configure would refuse an option added since)
  else
    CXX=$cxx meson setup "$dir" "$@" >/dev/null
  fi
}

# run_suite DIR: build and run Meson's tests (failures are counted, not fatal here).
run_suite() {
  local dir=$1 t0 t1
  echo "== $(basename "$dir"): build"
  t0=$SECONDS
  ninja -C "$dir" >"$dir.build.log" 2>&1 || { tail -50 "$dir.build.log"; echo "build failed: $dir" >&2; return 1; }
  t1=$SECONDS
  echo "== $(basename "$dir"): test (built in $((t1 - t0)) s)"
  meson test -C "$dir" --print-errorlogs --num-processes 2 --timeout-multiplier 3 || true
  echo "== $(basename "$dir"): tested in $((SECONDS - t1)) s"
}

# summary DIR... [-- NAME=ok|fail...]: counts the tests in the testlog.json of each build directory and the
# extra checks, prints "N passed, N failed", and fails if anything failed or nothing ran.
summary() {
  python3 - "$@" <<'PY'
import json, pathlib, sys
args = sys.argv[1:]
dirs, extra = (args[:args.index("--")], args[args.index("--") + 1:]) if "--" in args else (args, [])
passed = failed = skipped = 0
failures = []
for log in [pathlib.Path(d) / "meson-logs" / "testlog.json" for d in dirs]:
    if not log.exists():
        failed += 1
        print("FAILED: no test log in", log.parent.parent)
        continue
    for line in log.read_text().splitlines():
        if not line.strip():
            continue
        t = json.loads(line)
        r = t["result"]
        if r in ("OK", "EXPECTEDFAIL"): passed += 1
        elif r == "SKIP": skipped += 1
        else:
            failed += 1
            print("FAILED:", log.parent.parent.name, t["name"])
            failures.append((log.parent.parent.name, t))
for name_result in extra:                      # checks that are not Meson tests: name=ok|fail
    name, _, res = name_result.partition("=")
    if res == "ok": passed += 1
    else:
        failed += 1
        print("FAILED:", name)
for build, t in failures:  # repeated at the end: CI shows only the tail of a long log
    print(f"--- the last lines of {build} {t['name']} ({t['result']}):")
    print("\n".join((t.get("stdout") or "").splitlines()[-40:]))
print(f"{passed} passed, {failed} failed" + (f", {skipped} skipped" if skipped else ""))
sys.exit(1 if failed or passed == 0 else 0)
PY
}

# consumers: ania used as a Meson subproject, through its .pc files, and through CMake; the three at once (each
# is a build of a few files: together they keep both cores busy), without debug info (-g was a third of it).
consumer_subproject() {
  local src=$1
  mkdir -p "$src/subproject/subprojects"
  ln -sfn ../../../.. "$src/subproject/subprojects/ania"
  meson setup -Ddebug=false "$out/consumer-subproject" "$src/subproject" >"$out/consumer-subproject.log" 2>&1 &&
    ninja -C "$out/consumer-subproject" >>"$out/consumer-subproject.log" 2>&1 &&
    meson test -C "$out/consumer-subproject" >>"$out/consumer-subproject.log" 2>&1 &&
    python3 "$src/check_subproject_targets.py" "$out/consumer-subproject" >>"$out/consumer-subproject.log" 2>&1
}
consumer_pkgconfig() {
  local src=$1 prefix=$2
  local pc_path=$prefix/share/pkgconfig  # the compiled-mode .pc files are in the (arch-dependent) libdir
  for d in "$prefix"/lib*/pkgconfig "$prefix"/lib/*/pkgconfig; do [ -d "$d" ] && pc_path+=:$d; done
  PKG_CONFIG_PATH=$pc_path meson setup -Ddebug=false --wrap-mode=nofallback "$out/consumer-pkgconfig" "$src/pkgconfig" \
      >"$out/consumer-pkgconfig.log" 2>&1 &&
    ninja -C "$out/consumer-pkgconfig" >>"$out/consumer-pkgconfig.log" 2>&1 &&
    meson test -C "$out/consumer-pkgconfig" >>"$out/consumer-pkgconfig.log" 2>&1
}
consumer_cmake() {
  local src=$1 prefix=$2
  cmake -S "$src/cmake" -B "$out/consumer-cmake" -DCMAKE_PREFIX_PATH="$prefix" >"$out/consumer-cmake.log" 2>&1 &&
    cmake --build "$out/consumer-cmake" >>"$out/consumer-cmake.log" 2>&1 &&
    "$out/consumer-cmake/app" >>"$out/consumer-cmake.log" 2>&1 &&
    "$out/consumer-cmake/app-openai" >>"$out/consumer-cmake.log" 2>&1 &&
    { [ ! -e "$out/consumer-cmake/app-admin" ] || "$out/consumer-cmake/app-admin" >>"$out/consumer-cmake.log" 2>&1; }
}
consumers() {
  local src=$root/tests/consumer prefix=$root/$out/prefix
  rm -rf "$prefix" "$out/consumer-"*
  meson install -C "$out/gcc" --quiet >/dev/null
  local kinds=(subproject pkgconfig cmake) pids=() results=() i
  for k in "${kinds[@]}"; do "consumer_$k" "$src" "$prefix" & pids+=($!); done
  for i in "${!kinds[@]}"; do
    if wait "${pids[$i]}"; then
      results+=("consumer-${kinds[$i]}=ok")
    else
      tail -30 "$out/consumer-${kinds[$i]}.log"; results+=("consumer-${kinds[$i]}=fail")
    fi
  done
  CONSUMER_RESULTS=("${results[@]}")
}

# fuzz_build: the libFuzzer targets at -O1 with ASan+UBSan in build/fuzz (a configuration of their own: at -O0 in
# the clang build they would run about a quarter of the inputs in the same seconds, and CI saved no time by it).
fuzz_build() {
  local t0=$SECONDS
  configure "$out/fuzz" clang++ -Dfuzz=enabled -Dbench=disabled -Db_sanitize=address,undefined -Db_lundef=false -Doptimization=1
  ninja -C "$out/fuzz" $(for t in message config memory_tools transcript stored_row stream admin_api; do echo fuzz/fuzz_$t; done) >"$out/fuzz.build.log" 2>&1 ||
    { tail -30 "$out/fuzz.build.log"; return 1; }
  echo "fuzz targets built in $((SECONDS - t0)) s"
}

# fuzz_run DIR SECONDS: every fuzz target of the libFuzzer build DIR (-Dfuzz=enabled) for SECONDS each, from its
# checked-in corpus (fuzz/corpus/<t>) and every crash ever found (fuzz/regressions/<t>, all run before any
# mutation), new finds kept in build/fuzz-corpus/<t>; fails on any crash, leak, sanitizer report or timeout.
fuzz_run() {
  local dir=$1 secs=$2 t i failed=0 pids=() names=()
  export ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1
  # Two targets at a time (each is one thread): both cores busy, half the wall time.
  fuzz_one() {
    local t=$1
    mkdir -p "$out/fuzz-corpus/$t"
    if "$dir/fuzz/fuzz_$t" -max_total_time="$secs" -timeout=10 -rss_limit_mb=2048 -print_final_stats=0 \
         -artifact_prefix="$out/fuzz-crash-$t-" "$out/fuzz-corpus/$t" fuzz/corpus/$t fuzz/regressions/$t >"$out/fuzz-$t.log" 2>&1; then
      echo "fuzz $t: ok ($(grep -c . "$out/fuzz-$t.log") log lines, $(ls "$out/fuzz-corpus/$t" | wc -l) new inputs)"
    else
      echo "fuzz $t: FAILED (the log's tail follows below)"; return 1
    fi
  }
  for t in message config memory_tools transcript stored_row stream admin_api; do
    fuzz_one "$t" & pids+=($!) names+=("$t")
    if [ ${#pids[@]} -eq 2 ]; then
      wait "${pids[0]}" || { failed=1; tail -40 "$out/fuzz-${names[0]}.log"; }
      pids=("${pids[@]:1}") names=("${names[@]:1}")
    fi
  done
  for i in "${!pids[@]}"; do wait "${pids[$i]}" || { failed=1; tail -40 "$out/fuzz-${names[$i]}.log"; }; done
  return $failed
}

case "$cmd" in
  example)
    configure "$out/gcc" g++ -Dbench=disabled
    ninja -C "$out/gcc" examples/quickstart >/dev/null
    "$out/gcc/examples/quickstart" "$out/quickstart.db"
    ;;
  quick)
    configure "$out/gcc" g++ --werror -Dbench=enabled -Ddebug=false --prefix="$root/$out/prefix"
    run_suite "$out/gcc"
    summary "$out/gcc"
    ;;
  test)
    mkdir -p "$out"
    # Compile time is most of CI, so each configuration builds only what it adds, and each test mode once.
    # g++ at -Og, without -g (debug info is a third of the compile and nobody debugs a CI build), except what
    # instantiates the whole library, the ania-compiled libraries (ania::bot included) and the DoS test: -O1
    # with -ftree-vrp there (strict_cpp_args), the pass g++'s -Warray-bounds needs and -Og does not run. A unit
    # test file alone took 48 s at -O1, 32.6 at -Og, 31.2 at -O0 (2026-12-08). -O2 had taken 27% more job time
    # than -O1 (1365 s against 1079 s) and both were clean on 2026-12-07: -O2's inlining finds more, so a
    # release build still deserves a look. The g++ build has the unit tests in header-only mode, the examples,
    # the installation the consumers use, and what needs a build without sanitizers (the DoS timeouts, the
    # browser, PgBouncer).
    # clang++ at -O0 with ASan+UBSan and -Werror, without -g (a report still names each function of its stack;
    # -g costs 19-25% of each TU: unit/session.cpp 14.3 s against 17.8, memory.cpp 16.1/20.2, agent.cpp
    # 9.8/12.2, src/ania.cpp 15.9/18.6, alternated on 2026-12-07; whole fresh-clone runs vary more than that
    # from hour to hour, so they cannot tell): its warnings, the sanitizers, the unit tests and the quickstart
    # in compiled mode (the same code, instantiated in the ania-compiled libraries), the client and bot tests
    # (`bot_tests`: threads and sockets under the sanitizers), and what does not depend on the compiler, built
    # once (the one-header and ODR tests, the benchmarks' compile): clang parses these in half of g++'s time.
    # The PostgreSQL test is built in both. The fuzz replays are left to the fuzz step below, whose libFuzzer
    # binaries (ASan+UBSan too) run the corpus and every regression first.
    # A fresh-clone run on this 2-core machine (2026-12-07, before this split): g++ build 563 s + tests 52 s,
    # clang build 494 s + tests 137 s, TSan 107 + 14 s, consumers and fuzz (build and runs) ~210 s: 26.3 min.
    # With this split (but clang still with -g): g++ build 375 s + tests 53 s, clang build 502 s + tests 117 s,
    # TSan 83 + 20 s, consumers 112 s, fuzz build 88 s + runs 65 s: 23.7 min. As it is now (clang without -g,
    # no -inl header tests, 10 s of fuzzing a target), on a slower hour of the same day (the unchanged g++ build
    # took 405 s against 350): g++ 405 + 50 s, clang 457 + 145 s, TSan 74 + 17 s, consumers 104 s, fuzz build
    # 85 s + runs 35 s: 23.0 min; the same code with clang's -g, in the same hour: clang 563 + 131 s, 24.25 min.
    # The g++ build at -Og (2026-12-08, fresh clone; the run before it, at -O1, took 22 min): g++ 274 + 47 s
    # (385 + 46 at -O1), clang 409 + 115 s, TSan 64 + 16 s, consumers 95 s, fuzz build 84 s + runs 45 s: 19.3 min.
    # With the fuzz targets in the clang build (not kept, see the fuzz step): 1156-1220 s; the same g++ build took
    # 274, 293, 312 and 325 s in four runs of the day.
    configure "$out/gcc" g++ --werror -Dbench=disabled -Ddebug=false -Doptimization=g -Dcpp_args= -Dstrict_cpp_args=-O1,-ftree-vrp -Dheader_tests=false -Dfuzz_replay=false -Dtest_modes=header_only -Dbot_tests=false --prefix="$root/$out/prefix"
    configure "$out/clang" clang++ --werror -Dbench=enabled -Doptimization=0 -Ddebug=false -Db_sanitize=address,undefined -Db_lundef=false -Dfuzz_replay=false -Dtest_modes=compiled
    # ThreadSanitizer over the tests whose behaviour is about threads only (the writer, the memory manager's and
    # the agent's threaded cases, kept in memory_threads.cpp and agent_threads.cpp for this, the sessions): any
    # report fails.
    # No precompiled header there: for four files, making it first costs more than it saves (48 s against 44).
    # No -g either: it made session.cpp's compile 1.6x (53 s against 32); a report still names the functions.
    configure "$out/tsan" g++ -Dbench=disabled -Db_sanitize=thread -Db_lundef=false -Doptimization=1 -Ddebug=false -Dheader_tests=false -Dthreaded_only=true -Db_pch=false
    export ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1
    export TSAN_OPTIONS=halt_on_error=1:second_deadlock_stack=1
    ok=0
    run_suite "$out/gcc" || ok=1
    run_suite "$out/clang" || ok=1
    run_suite "$out/tsan" || ok=1
    CONSUMER_RESULTS=()
    t0=$SECONDS
    if [ $ok -eq 0 ]; then consumers; else CONSUMER_RESULTS=(build=fail); fi
    echo "== consumers: $((SECONDS - t0)) s"
    # Every fuzz target for a bounded time (ANIA_FUZZ_SECONDS, 10 s each): any crash or report fails. Every
    # corpus input and regression runs first whatever the time; the mutations after it are a smoke test here
    # (20 s each cost 64 s of the run): a search for new crashes is `scripts/dev.sh fuzz 600` on a spare machine.
    # Tried on 2026-12-08 and not kept: the targets built in the clang configuration (-Dfuzz=enabled, -O0) instead
    # of build/fuzz. Compiled alone they take 65 s at -O0 against 101 s at -O1, but in three fresh-clone runs the
    # clang build grew by 28-122 s (451, 481, 531 s against 409, 423) where the fuzz build had cost 84 s, and at
    # -O0 a target runs about a quarter of the inputs in its 10 s (fuzz_message: 584 log lines in 10 s, against
    # 680 in 3 s at -O1).
    echo "== fuzz"
    t0=$SECONDS
    if fuzz_build && fuzz_run "$out/fuzz" "${ANIA_FUZZ_SECONDS:-10}"; then
      CONSUMER_RESULTS+=(fuzz=ok)
    else
      CONSUMER_RESULTS+=(fuzz=fail)
    fi
    echo "== fuzz: $((SECONDS - t0)) s; the test command so far: $SECONDS s"
    summary "$out/gcc" "$out/clang" "$out/tsan" "$out/consumer-subproject" "$out/consumer-pkgconfig" -- "${CONSUMER_RESULTS[@]}"
    ;;
  fuzz)
    # A libFuzzer build at -O1 for long searches (`scripts/dev.sh fuzz 600`), run by fuzz_run. A crash input is
    # written to build/fuzz-crash-*: copy it into fuzz/regressions/<t>/ and it is replayed by every fuzz run and
    # as a test of every build with fuzz_replay (the default).
    secs=${2:-30}
    fuzz_build || exit 1
    fuzz_run "$out/fuzz" "$secs" || exit 1
    ;;
  coverage)
    command -v gcovr >/dev/null || { echo "coverage: gcovr missing (scripts/setup.sh installs it)" >&2; exit 1; }
    configure "$out/coverage" g++ -Db_coverage=true -Dbench=disabled -Doptimization=0
    ninja -C "$out/coverage" >"$out/coverage.build.log" 2>&1 || { tail -30 "$out/coverage.build.log"; exit 1; }
    find "$out/coverage" -name '*.gcda' -delete
    meson test -C "$out/coverage" --num-processes 2 --timeout-multiplier 5 >/dev/null || true
    gcovr --root "$root" --filter "$root/include/ania/" --object-directory "$out/coverage" --branches --txt "$out/coverage-branches.txt" >/dev/null
    gcovr --root "$root" --filter "$root/include/ania/" --object-directory "$out/coverage" --print-summary --txt "$out/coverage.txt" | tail -3
    echo "per file: $out/coverage.txt (lines), $out/coverage-branches.txt (branches)"
    ;;
  bench)
    configure "$out/release" g++ -Dbuildtype=release -Db_ndebug=true -Dtests=disabled -Dbench=enabled
    ninja -C "$out/release" >/dev/null
    for b in "$out"/release/bench/bench_*; do [ -x "$b" ] && [ -f "$b" ] && "$b" "${@:2}"; done
    ;;
  bench-compare)
    [ -n "${2:-}" ] || { echo "usage: scripts/dev.sh bench-compare ANCHORS_DIR [rounds]" >&2; exit 2; }
    need=()
    command -v go >/dev/null || need+=(golang-go)
    command -v npm >/dev/null || need+=(nodejs npm)
    if [ ${#need[@]} -gt 0 ]; then
      as_root=(); [ "$(id -u)" -ne 0 ] && as_root=(sudo)
      DEBIAN_FRONTEND=noninteractive "${as_root[@]}" apt-get install -y -qq --no-install-recommends "${need[@]}" >/dev/null
    fi
    configure "$out/release" g++ -Dbuildtype=release -Db_ndebug=true -Dtests=disabled -Dbench=enabled
    ninja -C "$out/release" >/dev/null
    python3 "$root/scripts/bench_compare.py" --anchors "$2" --build "$out/release" --rounds "${3:-3}" \
      --svg "$root/docs/bench-compare.svg"
    ;;
  *)
    echo "usage: scripts/dev.sh example|test|quick|bench|bench-compare ANCHORS|fuzz [seconds]|coverage" >&2; exit 2 ;;
esac
