#!/usr/bin/env python3
"""scripts/bench_compare.py -- ania's benchmarks next to their anchors, measured in the same run.

The anchors are the Go re-implementation of the original's design and the JS floor (JSON.stringify of the same
request body), kept outside the project (a directory with go/ and js/, given by --anchors or $ANIA_ANCHORS).
Each round runs ania's benchmarks, then the Go ones, then the JS ones, in a rotating order; every figure is the
median over the rounds, and every ratio is anchor / ania from this run only (a figure from another day is no
anchor). Writes <out>/bench_compare.json, <out>/bench_compare.md and an SVG chart (--svg).

Usage: scripts/bench_compare.py --anchors DIR --build BUILD_DIR [--rounds 3] [--out DIR] [--svg FILE]
BUILD_DIR is a release build with benchmarks (scripts/dev.sh bench-compare makes one).
"""
import argparse
import json
import os
import pathlib
import re
import shutil
import statistics
import subprocess
import sys
import tempfile

ROOT = pathlib.Path(__file__).resolve().parent.parent

# ania benchmark executable -> the benchmarks of it that have an anchor (a regex for --benchmark_filter).
ANIA = {
    "bench_message": "^(request_body|request_to_json)/(1k|10k)$",
    "bench_compressor": "^(budget_trim_cold/half/100k|truncate_oldest_half/10k)$",
    "bench_session": "^(janitor_tick/10k/(none_scan|lru128)|session_touch/contended.*)$",
}
# (ania name, anchor name, what is compared, target ratio anchor/ania or None)
PAIRS = [
    ("request_body/1k", "go:RequestEncode/1k", "request body, 1k history", None),
    ("request_body/10k", "go:RequestEncode/10k", "request body, 10k history", 40.0),
    ("request_body/10k", "js:json_stringify_request_body/10k", "request body, 10k history", 30.0),
    ("request_to_json/1k", "go:RequestEncode/1k", "whole body (cold window), 1k", None),
    ("request_to_json/10k", "go:RequestEncode/10k", "whole body (cold window), 10k", None),
    ("request_to_json/10k", "js:json_stringify_request_body/10k", "whole body (cold window), 10k", None),
    ("budget_trim_cold/half/100k", "go:TrimBudget/onthefly/half/100k", "budget trim, cold, 100k", None),
    ("truncate_oldest_half/10k", "go:TruncHalf/reslice/10k", "truncate oldest half, 10k", None),
    ("janitor_tick/10k/none_scan", "go:JanitorTick/10k/none", "janitor tick, full scan, nothing to evict", None),
    ("janitor_tick/10k/lru128", "go:JanitorTick/10k/lru128", "janitor tick, 10k -> 128", None),
    ("session_touch/contended", "go:SessionTouch/contended", "session touch, 2 threads", None),
]


def run(cmd, **kw):
    return subprocess.run(cmd, check=True, capture_output=True, text=True, **kw).stdout


def ania_round(build, data):
    out = {}
    for exe, flt in ANIA.items():
        path = build / "bench" / exe
        if not path.exists():
            sys.exit(f"bench_compare: {path} is missing (a release build with -Dbench=enabled)")
        j = json.loads(run([str(path), f"--benchmark_filter={flt}", "--benchmark_format=json"],
                           env={**os.environ, "ANIA_BENCH_DATA": str(data)}))
        scale = {"ns": 1e-6, "us": 1e-3, "ms": 1.0, "s": 1e3}
        for b in j["benchmarks"]:
            name = re.sub(r"/(real_time|threads:\d+)", "", b["name"])
            out[name] = b["real_time"] * scale[b["time_unit"]]  # ms
    return out


def go_round(go_test, data):
    text = run([str(go_test), "-test.run", "^$", "-test.bench", "RequestEncode|JanitorTick|SessionTouch|TrimBudget|TruncHalf",
                "-test.benchtime", "0.3s"], env={**os.environ, "ANIA_PERF_DATA": str(data)}, cwd=go_test.parent)
    out = {}
    for line in text.splitlines():
        m = re.match(r"^Benchmark(\S+?)(-\d+)?\s+\d+\s+([\d.]+) ns/op", line)
        if m:
            out["go:" + m.group(1)] = float(m.group(3)) / 1e6
    return out


def js_round(js_dir, data):
    text = run(["node", "bench_json_floor.mjs", "--sizes", "1k,10k", "--only", "stringify,utf8", "--json"],
               cwd=js_dir, env={**os.environ, "ANIA_PERF_DATA": str(data)})
    out = {}
    for r in json.loads(text.strip().splitlines()[-1])["results"]:
        out[f"js:{r['name']}/{r['size']}"] = r["median"]
    return out


def svg_chart(rows, path):
    """Horizontal bars, log scale: how many times faster than the anchor (1x = as fast)."""
    import math
    rows = [r for r in rows if r["ratio"]]
    bar_h, gap, left, width = 18, 8, 330, 420
    top = 40
    height = top + len(rows) * (bar_h + gap) + 40
    lo, hi = 0.1, max(10.0, max(r["ratio"] for r in rows) * 1.5)
    x = lambda v: left + width * (math.log10(v) - math.log10(lo)) / (math.log10(hi) - math.log10(lo))
    parts = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{left + width + 90}" height="{height}" font-family="sans-serif" font-size="12">',
             f'<text x="10" y="20" font-size="14" font-weight="bold">ania vs its anchors, one run (median of rounds): times faster (log scale)</text>']
    for tick in [0.1, 1, 10, 100, 1000, 10000]:
        if tick > hi:
            break
        parts.append(f'<line x1="{x(tick):.1f}" y1="{top - 6}" x2="{x(tick):.1f}" y2="{height - 30}" stroke="#ccc"/>')
        parts.append(f'<text x="{x(tick):.1f}" y="{height - 14}" text-anchor="middle" fill="#555">{tick:g}x</text>')
    for i, r in enumerate(rows):
        y = top + i * (bar_h + gap)
        colour = "#2e7d32" if r["ratio"] >= 1 else "#c62828"
        anchor = "Go" if r["anchor"].startswith("go:") else "JSON.stringify"
        parts.append(f'<text x="{left - 8}" y="{y + 13}" text-anchor="end">{r["what"]} (vs {anchor})</text>')
        x0, x1 = x(1), x(max(min(r["ratio"], hi), lo))
        parts.append(f'<rect x="{min(x0, x1):.1f}" y="{y}" width="{abs(x1 - x0):.1f}" height="{bar_h}" fill="{colour}"/>')
        parts.append(f'<text x="{max(x0, x1) + 4:.1f}" y="{y + 13}">{r["ratio"]:.3g}x</text>')
    parts.append(f'<line x1="{x(1):.1f}" y1="{top - 6}" x2="{x(1):.1f}" y2="{height - 30}" stroke="#000"/>')
    parts.append("</svg>")
    path.write_text("\n".join(parts) + "\n")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--anchors", default=os.environ.get("ANIA_ANCHORS"))
    ap.add_argument("--build", required=True)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--out", default=None)
    ap.add_argument("--svg", default=None)
    a = ap.parse_args()
    if not a.anchors:
        sys.exit("bench_compare: give the anchors directory (with go/ and js/) by --anchors or ANIA_ANCHORS")
    anchors, build = pathlib.Path(a.anchors).resolve(), pathlib.Path(a.build).resolve()
    data = pathlib.Path(os.environ.get("ANIA_BENCH_DATA") or ROOT / "bench" / "data").resolve()
    out_dir = pathlib.Path(a.out or build / "bench-compare")
    out_dir.mkdir(parents=True, exist_ok=True)
    work = pathlib.Path(tempfile.mkdtemp(prefix="ania-anchors-"))
    try:
        # The anchors are read-only: built and installed in a copy.
        shutil.copytree(anchors / "go", work / "go")
        shutil.copytree(anchors / "js", work / "js")
        for p in work.rglob("*"):
            p.chmod(0o755 if p.is_dir() else 0o644)
        (work / "go").chmod(0o755)
        (work / "js").chmod(0o755)
        go_test = work / "go" / "anchor.test"
        run(["go", "test", "-c", "-o", str(go_test), "."], cwd=work / "go")
        run(["npm", "ci", "--no-audit", "--no-fund"], cwd=work / "js")
        rounds = {"ania": [], "go": [], "js": []}
        steps = [("ania", lambda: ania_round(build, data)), ("go", lambda: go_round(go_test, data)),
                 ("js", lambda: js_round(work / "js", data))]
        for r in range(a.rounds):
            order = steps[r % 3:] + steps[:r % 3]  # alternate who goes first
            for name, fn in order:
                print(f"bench_compare: round {r + 1}/{a.rounds}: {name}", file=sys.stderr)
                rounds[name].append(fn())
    finally:
        shutil.rmtree(work, ignore_errors=True)
    med = {}
    for results in rounds.values():
        for k in set().union(*results):
            vals = [x[k] for x in results if k in x]
            med[k] = statistics.median(vals)
    rows = []
    for mine, anchor, what, target in PAIRS:
        if mine not in med or anchor not in med:
            rows.append({"ania": mine, "anchor": anchor, "what": what, "ania_ms": med.get(mine), "anchor_ms": med.get(anchor),
                         "ratio": None, "target": target})
            continue
        rows.append({"ania": mine, "anchor": anchor, "what": what, "ania_ms": med[mine], "anchor_ms": med[anchor],
                     "ratio": med[anchor] / med[mine], "target": target})
    (out_dir / "bench_compare.json").write_text(json.dumps({"rounds": a.rounds, "medians_ms": med, "pairs": rows}, indent=1))
    lines = ["| what | ania | ms | anchor | ms | anchor / ania | target |", "|---|---|---:|---|---:|---:|---:|"]
    for r in rows:
        f = lambda v: "n/a" if v is None else f"{v:.4g}"
        t = "" if r["target"] is None else (f"≥ {r['target']:g}× " + ("met" if r["ratio"] and r["ratio"] >= r["target"] else "NOT met"))
        lines.append(f"| {r['what']} | {r['ania']} | {f(r['ania_ms'])} | {r['anchor']} | {f(r['anchor_ms'])} | "
                     f"{f(r['ratio'])}× | {t} |")
    table = "\n".join(lines)
    (out_dir / "bench_compare.md").write_text(table + "\n")
    print(table)
    if a.svg:
        svg_chart(rows, pathlib.Path(a.svg))
        print(f"bench_compare: chart in {a.svg}", file=sys.stderr)


if __name__ == "__main__":
    main()
