#!/usr/bin/env python3
"""A hostile stdio MCP server for toolcost's hostile-client tests.

Modes (argv[1]):
  badutf8     a banner line that is not UTF-8, then a normal session
  dupes       two tools named alike
  repeat      tools/list answers with the same nextCursor every time
  endless     tools/list answers with a new nextCursor every time, and no tools
  many        one page of 300 tools
  longline    2 MB on stdout without a newline, then silence
  grandchild  starts a grandchild that ignores SIGTERM (its pid in argv[2]), then exits unanswered
  hang        the same, but stays and never answers
  setsid      starts a grandchild in a session of its own (so outside the group; pid in
              argv[2]), then exits unanswered
  rpc10       answers initialize with "jsonrpc": "1.0"
  both        answers initialize with both a result and an error
  brokenlist  answers tools/list with a line that is not valid JSON, then stays silent
"""
import json
import os
import signal
import subprocess
import sys
import time


def send(msg):
    sys.stdout.write(json.dumps(msg) + "\n")
    sys.stdout.flush()


def tool(name):
    return {"name": name, "description": "d", "inputSchema": {"type": "object", "properties": {}}}


mode = sys.argv[1]
if mode in ("grandchild", "hang", "setsid"):
    g = subprocess.Popen(
        ["sh", "-c", "trap '' TERM; exec sleep 300"],
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, stdin=subprocess.DEVNULL,
        start_new_session=(mode == "setsid"),
    )
    signal.signal(signal.SIGTERM, signal.SIG_IGN) if mode == "hang" else None
    time.sleep(0.2)  # the grandchild's sh has set its trap and exec'd
    with open(sys.argv[2] + ".tmp", "w") as f:
        f.write(f"{os.getpid()} {g.pid}\n")
    os.rename(sys.argv[2] + ".tmp", sys.argv[2])
    if mode in ("grandchild", "setsid"):
        sys.exit(0)
    while True:
        time.sleep(1)
if mode == "longline":
    sys.stdout.write("x" * (2 << 20))
    sys.stdout.flush()
    time.sleep(300)
if mode == "badutf8":
    sys.stdout.buffer.write(b"\xff\xfe banner \xc3\x28\n")
    sys.stdout.flush()

page = 0
for line in sys.stdin:
    msg = json.loads(line)
    method = msg.get("method")
    if method == "initialize":
        answer = {"jsonrpc": "2.0", "id": msg["id"], "result": {
            "protocolVersion": "2025-06-18", "capabilities": {"tools": {}},
            "serverInfo": {"name": "hostile", "version": "1"}}}
        if mode == "rpc10":
            answer["jsonrpc"] = "1.0"
        if mode == "both":
            answer["error"] = {"code": -32000, "message": "and also an error"}
        send(answer)
    elif method == "tools/list" and mode == "brokenlist":
        sys.stdout.write('{"jsonrpc": "2.0", "id": %d, "result": {"tools": [{"name": "a",\n' % msg["id"])
        sys.stdout.flush()
        time.sleep(300)
    elif method == "tools/list":
        page += 1
        if mode == "dupes":
            result = {"tools": [tool("same"), tool("other"), tool("same")]}
        elif mode == "repeat":
            result = {"tools": [tool(f"t{page}")], "nextCursor": "again"}
        elif mode == "endless":
            result = {"tools": [], "nextCursor": f"c{page}"}
        elif mode == "many":
            result = {"tools": [tool(f"t{i}") for i in range(300)]}
        else:
            result = {"tools": [tool("alpha"), tool("beta")]}
        send({"jsonrpc": "2.0", "id": msg["id"], "result": result})
