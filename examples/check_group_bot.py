#!/usr/bin/env python3
"""Runs examples/group_bot against a SCRIPTED OpenAI-compatible server on 127.0.0.1 (this file: no model runs
here): two groups and a private chat at once; only addressed messages are answered; a group's history never
reaches another's request; the compression model (compressor.model) writes the summary once the context passes
its budget; everything is in the SQLite file afterwards."""
import http.server, json, pathlib, sqlite3, subprocess, sys, threading

exe, work = sys.argv[1], pathlib.Path(sys.argv[2])
work.mkdir(parents=True, exist_ok=True)
db = work / "group.db"
for p in work.glob("group.db*"):
    p.unlink()
seen = []


class Scripted(http.server.BaseHTTPRequestHandler):
    """SCRIPTED: the compression model answers a summary, the main one "echo: <last user words>"; both report
    3900 prompt tokens: over the budget of max_context_tokens 4000 x 0.8 (less the prompt and tool schemas)."""

    def do_POST(self):
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        seen.append(body)
        if body["model"] == "cheap":
            text = "摘要：之前聊过天"
        else:
            text = "echo: " + [m for m in body["messages"] if m["role"] == "user"][-1]["content"]
        out = json.dumps({"choices": [{"index": 0, "message": {"role": "assistant", "content": text}, "finish_reason": "stop"}],
                          "usage": {"prompt_tokens": 3900, "completion_tokens": 5, "total_tokens": 3905}}).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(out)))
        self.end_headers()
        self.wfile.write(out)

    def log_message(self, *args):
        pass


server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Scripted)
threading.Thread(target=server.serve_forever, daemon=True).start()
url = f"http://127.0.0.1:{server.server_address[1]}/v1"
config = work / "bot.json"
config.write_text(json.dumps({"max_context_tokens": 4000, "llm": {"base_url": url, "api_key": "sk-scripted", "model": "big"},
                              "compressor": {"model": "cheap"}}))
lines = ["g:1 @Ania 一组的问题", "g:2 闲聊不叫机器人", "g:2 @Ania 二组的问题", "f:7 私聊的问题", "g:1 @Ania 一组第二问"]
out = subprocess.run([exe, str(config), str(db)], input="\n".join(lines) + "\n", capture_output=True, text=True,
                     timeout=300, check=True).stdout.splitlines()
print("\n".join(out))


def expect(cond, what):
    if not cond:
        sys.exit("check_group_bot: " + what)


expect(out == ["g:1: echo: @Ania 一组的问题", "g:2: echo: @Ania 二组的问题", "f:7: echo: 私聊的问题", "g:1: echo: @Ania 一组第二问"],
       f"only addressed messages are answered, each in its session: {out}")
main = [b for b in seen if b["model"] == "big"]
expect(all("一组" not in json.dumps(b, ensure_ascii=False) for b in main if "二组" in json.dumps(b, ensure_ascii=False)),
       "a group's history never reaches another group's request")
expect([b["model"] for b in seen].count("cheap") == 1, f"one summary by the compression model: {[b['model'] for b in seen]}")
with sqlite3.connect(db) as c:
    sessions = dict(c.execute("SELECT session_id, COUNT(*) FROM ania_chat_message GROUP BY session_id").fetchall())
expect(set(sessions) == {"g:1", "g:2", "f:7"}, f"three sessions stored: {sessions}")
print("check_group_bot: ok")
