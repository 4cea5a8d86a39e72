#!/usr/bin/env python3
"""A deliberately awkward stdio MCP server for toolcost's weigh tests.

Modes (argv[1]):
  noisy    prints banners on stdout, sends list_changed, pings the client, pages tools/list
  exit     writes to stderr and exits 3 before answering
  hang     starts a child process, records both pids in argv[2], then never answers
  env      lists one tool per variable of its environment (ENV_<name>) and one naming the
           folder it runs in (CWD_<folder name>)
  instructions N  gives N characters of `instructions` in its initialize answer, one tool
"""
import json
import os
import subprocess
import sys
import time


def send(msg):
    sys.stdout.write(json.dumps(msg) + "\n")
    sys.stdout.flush()


def tool(name, size):
    return {
        "name": name,
        "description": "A tool that exists to be weighed. " * size,
        "inputSchema": {"type": "object", "properties": {"q": {"type": "string"}}, "required": ["q", "missing"]},
        "annotations": {"readOnlyHint": True},
    }


mode = sys.argv[1]
if mode == "exit":
    sys.stderr.write("fatal: config file not found\n")
    sys.exit(3)
if mode == "hang":
    child = subprocess.Popen(["sleep", "300"])
    with open(sys.argv[2], "w") as f:
        f.write(f"{os.getpid()} {child.pid}\n")
    while True:
        time.sleep(1)

if mode == "instructions":
    n = int(sys.argv[2])
    text = ("Use the search tool before the fetch tool; cite the page. " * (n // 58 + 1))[:n]
    for line in sys.stdin:
        msg = json.loads(line)
        if msg.get("method") == "initialize":
            send({"jsonrpc": "2.0", "id": msg["id"], "result": {
                "protocolVersion": "2025-06-18", "capabilities": {"tools": {}},
                "serverInfo": {"name": "instructed", "version": "1"}, "instructions": text}})
        elif msg.get("method") == "tools/list":
            send({"jsonrpc": "2.0", "id": msg["id"], "result": {"tools": [tool("search", 1)]}})
    sys.exit(0)

if mode == "env":
    import re
    names = ["ENV_" + re.sub(r"[^A-Za-z0-9_]", "_", k) for k in sorted(os.environ)]
    names.append("CWD_" + re.sub(r"[^A-Za-z0-9_]", "_", os.path.basename(os.getcwd())))
    for line in sys.stdin:
        msg = json.loads(line)
        if msg.get("method") == "initialize":
            send({"jsonrpc": "2.0", "id": msg["id"], "result": {
                "protocolVersion": "2025-06-18", "capabilities": {"tools": {}},
                "serverInfo": {"name": "env", "version": "1"}}})
        elif msg.get("method") == "tools/list":
            send({"jsonrpc": "2.0", "id": msg["id"], "result": {"tools": [tool(n, 1) for n in names]}})
    sys.exit(0)

print("Starting fake server v1 ...", flush=True)
print("WARNING: this is not JSON", flush=True)
for line in sys.stdin:
    msg = json.loads(line)
    method = msg.get("method")
    if method == "initialize":
        send({"jsonrpc": "2.0", "method": "notifications/tools/list_changed"})
        send({"jsonrpc": "2.0", "id": "srv-1", "method": "ping"})
        send({"jsonrpc": "2.0", "id": msg["id"], "result": {
            "protocolVersion": "2025-06-18", "capabilities": {"tools": {"listChanged": True}},
            "serverInfo": {"name": "fake server", "version": "1"}}})
    elif method == "tools/list":
        cursor = (msg.get("params") or {}).get("cursor")
        if cursor is None:
            send({"jsonrpc": "2.0", "id": msg["id"], "result": {"tools": [tool("alpha", 3), tool("beta", 1)], "nextCursor": "p2"}})
        else:
            print("log: second page requested", flush=True)
            send({"jsonrpc": "2.0", "id": msg["id"], "result": {"tools": [tool("gamma", 8)]}})
