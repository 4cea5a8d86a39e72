#!/usr/bin/env python3
"""One request as the official anthropic Python SDK sends it, through toolcost's gateway: a
system prompt, several tools (two of them an MCP server's, named mcp__<server>__<tool>) and one
user message, for a client profile to be made from its capture.

usage: sdk_capture.py BASE_URL
Prints one JSON object: the input tokens the SDK parsed from the answer.
"""
import json
import sys

import anthropic

base = sys.argv[1]
a = anthropic.Anthropic(base_url=base, api_key="not-a-real-key", max_retries=0)
schema = lambda *props: {"type": "object", "properties": {p: {"type": "string", "description": f"The {p}"} for p in props},
                         "required": list(props[:1])}
tools = [
    {"name": "run_shell", "description": "Run a shell command in the project folder and return what it printed.",
     "input_schema": {"type": "object", "properties": {"command": {"type": "string"}}, "required": ["command"]}},
    {"name": "read_file", "description": "Read a text file, with line numbers.", "input_schema": schema("path", "offset")},
    {"name": "write_file", "description": "Write a whole file.", "input_schema": schema("path", "content")},
    {"name": "mcp__notes__search_notes", "description": "Search the user's notes.", "input_schema": schema("query")},
    {"name": "mcp__notes__add_note", "description": "Add a note.", "input_schema": schema("title", "body")},
]
system = "You are a careful assistant for a small software team. Answer in plain sentences; ask before you change files."
r = a.messages.create(model="claude-sonnet-4.6", max_tokens=512, system=system, tools=tools,
                      messages=[{"role": "user", "content": "Which files mention the billing export?"}],
                      extra_headers={"x-toolcost-next": json.dumps({"text": "Let me look."})})
print(json.dumps({"input": r.usage.input_tokens + (r.usage.cache_read_input_tokens or 0)
                  + (r.usage.cache_creation_input_tokens or 0)}))
