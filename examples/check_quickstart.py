#!/usr/bin/env python3
"""Runs the quickstart twice on a fresh SQLite file and checks what its output and the file say:
the first run starts empty, compresses, saves a memory and has the validator catch the cut-off call; the
second run loads exactly what the first one stored, compresses on the estimate before its first request,
and finds the memory again; the store never holds what was injected for one request only."""
import pathlib, re, sqlite3, subprocess, sys

exe, db = sys.argv[1], pathlib.Path(sys.argv[2])
for p in db.parent.glob(db.name + "*"):
    p.unlink()


def run():
    out = subprocess.run([exe, str(db)], check=True, capture_output=True, text=True).stdout
    print(out)
    return out


def expect(cond, what):
    if not cond:
        sys.exit("check_quickstart: " + what)


def count(pattern, text):
    return len(re.findall(pattern, text, re.M))


first = run()
loaded = re.search(r"^loaded (\d+) messages and (\d+) memories", first, re.M)
expect(loaded and loaded.groups() == ("0", "0"), "the first run must start from an empty file")
expect(count(r"^  \[compress\] \d+ messages -> \d+", first) >= 1, "the first run must compress")
expect("已保存记忆" in first, "the first run must save a memory through memory_save")
expect(count(r"^validator: unanswered_call at message \d+ \(call_cut\)$", first) == 1, "the validator must catch the cut call")
expect('"content":"[cancelled]","tool_call_id":"call_cut"' in first, "the repair must answer the cut call")
held = re.search(r"holds (\d+) messages and (\d+) memories", first)
expect(held is not None, "the first run must report what the file holds")

second = run()
loaded = re.search(r"^loaded (\d+) messages and (\d+) memories", second, re.M)
expect(loaded and loaded.groups() == held.groups(), f"the second run must load what the first stored: {held.groups()}")
# The history the first run left is over the tiny budget: compressed before the second run's first request.
first_turn = second.split("  user ", 1)[0]
expect("[compress]" in first_turn, "a restart with an over-budget history must compress before the first request")
expect("已有相同的记忆" in second, "saving the same memory again must be refused as an exact duplicate")
expect("记得！你喜欢美式咖啡" in second, "memory_search must find the saved memory")

with sqlite3.connect(db) as c:
    rows = [r[0] for r in c.execute("SELECT content FROM ania_chat_message")]
held_now = re.search(r"holds (\d+) messages", second)
expect(held_now and len(rows) == int(held_now.group(1)), "the file must hold the messages the second run reports")
expect(rows and not any("【相关记忆】" in r for r in rows), "the store must hold no injected memory block")
expect(any("以下是之前的对话摘要" in r for r in rows), "the store must hold the summary after a compression")
print("check_quickstart: ok")
