#!/usr/bin/env python3
"""The official Python MCP client (`mcp` 2.x) against toolcost's reference server.

usage: sdk_py_client.py <url> <token> <mode> <tool> <arguments JSON>
mode: `auto` (server/discover, then the stateless revision or initialize), `legacy`, or a
modern version such as 2026-07-28. Lists every page of tools, calls one, prints one JSON line.
"""
import asyncio
import json
import sys

import httpx2
from mcp import Client
from mcp.client.streamable_http import streamable_http_client


async def main():
    url, token, mode, tool, args = sys.argv[1:6]
    http = httpx2.AsyncClient(headers={"authorization": f"Bearer {token}"}, timeout=60)
    async with Client(streamable_http_client(url, http_client=http), mode=mode) as client:
        names, cursor, pages = [], None, 0
        while True:
            page = await client.list_tools(cursor=cursor)
            names += [t.name for t in page.tools]
            pages += 1
            cursor = page.next_cursor
            if not cursor or pages > 1000:
                break
        result = await client.call_tool(tool, json.loads(args))
        print(json.dumps({
            "protocol": client.protocol_version,
            "tools": names,
            "pages": pages,
            "result": result.model_dump(mode="json", by_alias=True, exclude_none=True),
        }))


asyncio.run(main())
