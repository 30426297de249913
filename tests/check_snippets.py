#!/usr/bin/env python3
"""tests/check_snippets.py ROOT CXX...: every C++ block of README.md and docs/*.md is real code.

A block passes when it is, byte for byte, a region of a file the build compiles (examples/, tests/, include/;
a region inside a function may be shown without its common indentation),
or when it compiles on its own (g++ -std=c++20 -fsyntax-only, ania's headers and the optional libraries'
include paths). Anything else -- a fragment that uses a name it does not define -- fails, naming the file and
line of the block, so a snippet can never again drift from the library."""
import pathlib
import re
import shutil
import subprocess
import sys
import tempfile

root = pathlib.Path(sys.argv[1])
cxx = sys.argv[2:] or ["c++"]
sources = {}
for pattern in ("examples/*.cpp", "examples/*.hpp", "tests/**/*.cpp", "tests/**/*.hpp", "include/**/*.hpp"):
    for p in root.glob(pattern):
        sources[p.relative_to(root)] = p.read_text(encoding="utf-8")

flags = ["-std=c++20", "-fsyntax-only", f"-I{root / 'include'}"]
if shutil.which("pkg-config"):
    for lib in ("libpq", "libcurl", "sqlite3"):
        r = subprocess.run(["pkg-config", "--cflags", lib], capture_output=True, text=True)
        if r.returncode == 0:
            flags += r.stdout.split()

docs = [root / "README.md"] + sorted((root / "docs").glob("*.md"))
failed = checked = 0
with tempfile.TemporaryDirectory() as tmp:
    for doc in docs:
        text = doc.read_text(encoding="utf-8")
        for m in re.finditer(r"^```cpp\n(.*?)^```", text, re.S | re.M):
            block = m.group(1)
            line = text.count("\n", 0, m.start()) + 1
            where = f"{doc.relative_to(root)}:{line}"
            checked += 1
            # A region inside a function is shown without its indentation: try the block indented as a whole.
            shifted = ["".join(" " * k + l if l.strip() else l for l in block.splitlines(True)) for k in (0, 4, 8, 12)]
            region = next((str(p) for p, s in sources.items() if any(b in s for b in shifted)), None)
            if region:
                print(f"ok: {where} is a region of {region}")
                continue
            src = pathlib.Path(tmp) / f"snippet_{checked}.cpp"
            src.write_text(block, encoding="utf-8")
            r = subprocess.run(cxx + flags + [str(src)], capture_output=True, text=True)
            if r.returncode == 0:
                print(f"ok: {where} compiles on its own")
            else:
                failed += 1
                print(f"FAIL: {where}: neither a region of a compiled file nor a program that compiles:")
                print("\n".join(r.stderr.splitlines()[:12]))
print(f"{checked} C++ blocks, {failed} failed")
sys.exit(1 if failed or checked == 0 else 0)
