#!/usr/bin/env python3
"""Runs the quickstart twice on a fresh SQLite file and checks what its output and the file say: the first
run starts empty, saves a memory through a tool call, flags a near-duplicate, compresses (a summary, then a
failed summary that falls back to truncation) and finds the memory again; the second run replays exactly what
the first one stored, compresses on the estimate before its first request and refuses an exact duplicate;
the store never holds what was injected for one request only."""
import os, pathlib, re, sqlite3, subprocess, sys

exe, db = sys.argv[1], pathlib.Path(sys.argv[2])
for p in db.parent.glob(db.name + "*"):
    p.unlink()


def run():
    env = {k: v for k, v in os.environ.items() if not k.startswith('ANIA_')}  # the scripted model, always
    out = subprocess.run([exe, str(db)], check=True, capture_output=True, text=True, env=env).stdout
    print(out)
    return out


def expect(cond, what):
    if not cond:
        sys.exit("check_quickstart: " + what)


def count(pattern, text):
    return len(re.findall(pattern, text, re.M))


first = run()
expect("model: SCRIPTED" in first, "the output must say that the model is scripted")
loaded = re.search(r"^loaded (\d+) messages and (\d+) memories", first, re.M)
expect(loaded and loaded.groups() == ("0", "0"), "the first run must start from an empty file")
expect(count(r'^  assistant .*"tool_calls":\[\{"id":"call_\d+","type":"function"', first) >= 2, "the model must call tools")
expect("已保存记忆" in first, "the first run must save a memory through memory_save")
expect("与已有记忆相似" in first, "the second save must be flagged as a near-duplicate")
expect(count(r"^  \[compress\] reported usage: \d+ tokens > threshold; \d+ messages -> \d+ \(summarised\)", first) >= 1,
       "the first run must compress with a summary")
expect(count(r"^  \[compress\] .*\(summary failed, oldest half dropped\)", first) >= 1 and "[fallback] llm_summary: scripted outage" in first,
       "a failed summary must fall back to truncation")
expect(count(r"^  \[inject\]  \d+ runes of memories", first) >= 1, "relevant memories must be injected into a request")
expect("记得！你喜欢美式咖啡" in first, "memory_search must find the saved memory")
held = re.search(r"holds (\d+) messages and (\d+) memories", first)
expect(held is not None, "the first run must report what the file holds")

second = run()
loaded = re.search(r"^loaded (\d+) messages and (\d+) memories", second, re.M)
expect(loaded and loaded.groups() == held.groups(), f"the second run must load what the first stored: {held.groups()}")
# The history the first run left is over the tiny budget: compressed on the estimate before the first request.
first_turn = second.split("user: ", 2)[1].split("  assistant", 1)[0]
expect("[compress] estimate:" in first_turn, "a restart with an over-budget history must compress before the first request")
expect("已有相同的记忆" in second, "saving the same memory again must be refused as an exact duplicate")

with sqlite3.connect(db) as c:
    rows = [r[0] for r in c.execute("SELECT content FROM ania_chat_message")]
held_now = re.search(r"holds (\d+) messages", second)
expect(held_now and len(rows) == int(held_now.group(1)), "the file must hold the messages the second run reports")
expect(rows and not any("【相关记忆】" in r for r in rows), "the store must hold no injected memory block")
print("check_quickstart: ok")
