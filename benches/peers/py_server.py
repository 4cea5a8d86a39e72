"""The official Python MCP SDK (`mcp` 2.3.0) serving the same definitions as toolcost's
reference server, over Streamable HTTP with sessions and JSON answers, for the side-by-side
bench. `python py_server.py TOOLS.json` prints the URL it listens on."""

import json
import socket
import sys

import mcp_types as types
import uvicorn
from mcp.server.lowlevel import Server

with open(sys.argv[1]) as f:
    TOOLS = [types.Tool.model_validate(t) for t in json.load(f)["tools"]]
NAMES = {t.name for t in TOOLS}


async def list_tools(ctx, params):
    return types.ListToolsResult(tools=TOOLS)


async def call_tool(ctx, params):
    # The cheapest honest call: a known name answers a small result, an unknown one an error.
    known = params.name in NAMES
    text = f"called {params.name}" if known else "unknown tool"
    return types.CallToolResult(content=[types.TextContent(type="text", text=text)], isError=not known)


server = Server("peer", version="1", on_list_tools=list_tools, on_call_tool=call_tool)
app = server.streamable_http_app(json_response=True)

sock = socket.socket()
sock.bind(("127.0.0.1", 0))
port = sock.getsockname()[1]
# Listening before the address is printed: a client that connects at once is queued, not
# refused, while the server starts.
sock.listen(128)
print(f"listening on http://127.0.0.1:{port}/mcp", flush=True)
uvicorn.Server(uvicorn.Config(app, log_level="warning")).run(sockets=[sock])
