#!/usr/bin/env python3
"""A near miss must not compile, and the first error the user reads must say what is wrong.

usage: check_compile_fail.py SOURCE INCLUDE_DIR COMPILER [ARGS...]
The expected text is on the source's `// EXPECT:` line. The compiler's diagnostics must hold at most
MAX_ERRORS error lines: one readable assertion, not a template backtrace of errors."""
import re
import subprocess
import sys

MAX_ERRORS = 2

source, include, compiler = sys.argv[1], sys.argv[2], sys.argv[3:]
expect = next(l.split("EXPECT:", 1)[1].strip() for l in open(source, encoding="utf-8") if "EXPECT:" in l)
cmd = compiler + ["-std=c++20", "-fsyntax-only", "-fdiagnostics-color=never", "-I" + include, source]
p = subprocess.run(cmd, capture_output=True, text=True)
if p.returncode == 0:
    sys.exit(f"FAIL: {source} compiled; it must not")
errors = [l for l in p.stderr.splitlines() if re.search(r"\berror\b", l)]
print("\n".join(errors[:5]))
if not errors or expect not in errors[0]:
    sys.exit(f"FAIL: the first error line does not say {expect!r}:\n{p.stderr[:4000]}")
if len(errors) > MAX_ERRORS:
    sys.exit(f"FAIL: {len(errors)} error lines (at most {MAX_ERRORS}):\n{p.stderr[:4000]}")
print(f"ok: {len(errors)} error line(s), the first says {expect!r}")
