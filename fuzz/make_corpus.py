#!/usr/bin/env python3
"""Writes the seed corpora of the fuzz targets (fuzz/corpus/<target>/) from the vendored data set
(bench/data): real messages, tool arguments and memories, plus hand-made edge cases. Run it again after the
data set changes; the corpora are checked in so that a clone needs nothing else."""
import gzip, json, pathlib, random

root = pathlib.Path(__file__).resolve().parent
data = root.parent / "bench" / "data"
rng = random.Random(7)


def lines(name):
    with gzip.open(data / f"{name}.jsonl.gz", "rt", encoding="utf-8") as f:
        return [l.rstrip("\n") for l in f if l.strip()]


def write(target, items):
    d = root / "corpus" / target
    d.mkdir(parents=True, exist_ok=True)
    for old in d.iterdir():
        old.unlink()
    for i, item in enumerate(items):
        (d / f"seed_{i:03d}").write_bytes(item if isinstance(item, bytes) else item.encode("utf-8"))


history = lines("history_1k")
messages = rng.sample(history, 48) + [
    '{"role":"user","content":"x","weight":-1e400}', '{"role":"user","content":1e400}',
    '{"role":"assistant","content":null,"tool_calls":[{"id":"c","type":"function","function":{"name":"f","arguments":{"a":[1,2]}}}]}',
    '{"role":"user","content":[{"type":"text","text":"look"},{"type":"image_url","image_url":{"url":"data:image/png;base64,AAAA","detail":"high"}}]}',
    '{"role":"tool","tool_call_id":"c","content":"r","extra":{"nested":[[[[1]]]]}}', '[' * 70 + ']' * 70,
]
write("message", messages)

write("config", ['{}', '{"max_context_tokens":32000,"compress_ratio":0.5}', '{"memory":{"near_duplicate_threshold":null}}',
                 '{"memory":{"max_entries":5,"fold_case_and_width":true,"inject_entries":4}}', '{"session":{"max_sessions":0}}',
                 '{"compress_ratio":1e-320}', '[1,2]', '{"ocr":{"model":"m","api_key":"\\u0000"}}', '{"max_context_tokens":18446744073709551615}'])

tool_args = []
for l in history:
    m = json.loads(l)
    for c in m.get("tool_calls") or []:
        if c["function"]["name"].startswith("memory_"):
            tool_args.append(c["function"]["arguments"])
memories = [json.loads(l) for l in lines("memory_scopes")]
items = []
for i, a in enumerate(rng.sample(tool_args, min(24, len(tool_args)))):
    items.append(bytes([i % 4]) + a.encode("utf-8"))
for i, e in enumerate(rng.sample(memories, 24)):
    items.append(bytes([0]) + json.dumps({"content": e["content"], "user_id": e["user_id"], "tags": e["tags"]}, ensure_ascii=False).encode("utf-8"))
items += [bytes([1]) + b'{"query":"\xe5\x92\x96\xe5\x95\xa1","limit":18446744073709551615}', bytes([2]) + b'{"id":"00000000","tags":[]}',
          bytes([3]) + b'{"id":"x\\n\\u0000"}', bytes([0]) + b'{"content":"a","tags":[' + b'"t",' * 40 + b'"t"]}', bytes([1]) + b'']
write("memory_tools", items)

write("transcript", [bytes(rng.randrange(256) for _ in range(rng.randrange(2, 64))) for _ in range(40)] +
      [bytes([0, 0, 2, 3, 3, 0, 3, 1]), bytes([2, 0xFF, 3, 5, 3, 6, 3, 7])])

rows = []
for l in rng.sample(history, 24):
    e = rng.choice(memories)
    rows.append(l.encode() + b"\0" + json.dumps(e["tags"], ensure_ascii=False).encode() + b"\0" + b"[0.5,-1.25,3e38]")
rows += [b'{"role":"user","content":"x","n":-1e400}\0["a",1,null]\0[1e400]', b'{not json\0{}\0"x"', b'\0\0',
         b'{"role":"wizard"}\0[\"\xff\"]\0[1,"2",3.5e38]']
write("stored_row", rows)
for t in ("message", "config", "memory_tools", "transcript", "stored_row"):
    (root / "regressions" / t).mkdir(parents=True, exist_ok=True)
    keep = root / "regressions" / t / ".keep"
    if not any((root / "regressions" / t).iterdir()):
        keep.write_text("")
print("corpora written")
