#!/usr/bin/env python3
"""A small server on the official Python MCP SDK (`mcp` 2.x), for weighing it at each protocol
version it speaks. usage: sdk_py_server.py stdio | sdk_py_server.py http PORT
"""
import sys

from mcp.server.mcpserver import MCPServer

app = MCPServer("py-sdk-weigh")


@app.tool()
def add(a: int, b: int) -> int:
    """Add two integers and return the sum."""
    return a + b


@app.tool()
def shout(text: str, times: int = 1) -> str:
    """Upper-case a piece of text, repeated a number of times."""
    return " ".join([text.upper()] * times)


@app.tool()
def lookup_order(order_id: str, include_items: bool = False) -> dict:
    """Fetch an order by its id; optionally with its line items."""
    return {"order_id": order_id, "items": [] if include_items else None}


if sys.argv[1] == "http":
    app.run("streamable-http", host="127.0.0.1", port=int(sys.argv[2]))
else:
    app.run()
