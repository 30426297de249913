#!/usr/bin/env python3
"""Runs examples/hello_bot as a user would: against a SCRIPTED OpenAI-compatible server on 127.0.0.1 (this
file: no model runs here), or against a real endpoint when ANIA_BASE_URL, ANIA_API_KEY and ANIA_MODEL are set.
Checks the replies, that the model was sent the history and the memory tools, and that the SQLite file holds
the turns after the program ends (a second run replays them)."""
import http.server, json, os, pathlib, sqlite3, subprocess, sys, threading

exe, work = sys.argv[1], pathlib.Path(sys.argv[2])
work.mkdir(parents=True, exist_ok=True)
db = work / "hello.db"
for p in work.glob("hello.db*"):
    p.unlink()
real = all(os.environ.get(k) for k in ("ANIA_BASE_URL", "ANIA_API_KEY", "ANIA_MODEL"))
seen = []


class Scripted(http.server.BaseHTTPRequestHandler):
    """SCRIPTED: answers every chat completion with "echo: <the user's last words> (<n> user messages)"."""

    def do_POST(self):
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        seen.append(body)
        users = [m for m in body["messages"] if m["role"] == "user"]
        text = f"echo: {users[-1]['content']} ({len(users)} user messages)"
        out = json.dumps({"choices": [{"index": 0, "message": {"role": "assistant", "content": text}, "finish_reason": "stop"}],
                          "usage": {"prompt_tokens": 50, "completion_tokens": 5, "total_tokens": 55}}).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(out)))
        self.end_headers()
        self.wfile.write(out)

    def log_message(self, *args):
        pass


if real:
    llm = {k: os.environ["ANIA_" + k.upper()] for k in ("base_url", "api_key", "model")}
else:
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Scripted)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    llm = {"base_url": f"http://127.0.0.1:{server.server_address[1]}/v1", "api_key": "sk-scripted", "model": "scripted"}
config = work / "bot.json"
config.write_text(json.dumps({"llm": llm}))


def run(lines):
    out = subprocess.run([exe, str(config), str(db)], input="\n".join(lines) + "\n", capture_output=True, text=True,
                         timeout=300, check=True).stdout.splitlines()
    print("\n".join(out))
    return out


def expect(cond, what):
    if not cond:
        sys.exit("check_hello_bot: " + what)


first = run(["你好", "今天天气怎么样"])
expect(len(first) == 2 and all(first), "two questions must get two replies")
second = run(["还记得我说过什么吗"])
expect(len(second) == 1 and second[0], "the second run must reply")
if not real:
    expect(first == ["echo: 你好 (1 user messages)", "echo: 今天天气怎么样 (2 user messages)"], f"unexpected replies {first}")
    expect(second == ["echo: 还记得我说过什么吗 (3 user messages)"], "a restart must replay the stored history")
    expect(seen[0]["messages"][0] == {"role": "system", "content": "你是 Ania，一个简洁的助手。"}, "the base prompt goes first")
    names = sorted(t["function"]["name"] for t in seen[0].get("tools", []))
    expect(names == ["memory_forget", "memory_save", "memory_search", "memory_update"], f"memory tools bound to f:1: {names}")
with sqlite3.connect(db) as c:
    rows = c.execute("SELECT COUNT(*) FROM ania_chat_message WHERE session_id = 'f:1'").fetchone()[0]
expect(rows == 6, f"the file must hold the three turns (6 rows), holds {rows}")
print("check_hello_bot: ok")
