#!/usr/bin/env python3
"""tests/check_header_list.py INCLUDE_DIR NAME...: every header under INCLUDE_DIR/ania is in the list that
drives installation and the header tests (include/meson.build), and every listed one exists."""
import pathlib
import sys

root = pathlib.Path(sys.argv[1])
listed = set(sys.argv[2:])
on_disk = {str(p.relative_to(root)) for p in (root / "ania").rglob("*.hpp")}
missing, stale = sorted(on_disk - listed), sorted(listed - on_disk)
for h in missing:
    print(f"not in include/meson.build (not installed, not header-tested): {h}")
for h in stale:
    print(f"listed in include/meson.build but absent: {h}")
sys.exit(1 if missing or stale else 0)
