#!/usr/bin/env python3
"""Prompt caching and provider limits through toolcost's gateway, as the official SDKs see them.

usage: sdk_caching.py BASE_URL
Prints one JSON object with the usage fields each call returned, and the refusals' status and type.
"""
import json
import sys

import anthropic
import openai

base = sys.argv[1]
a = anthropic.Anthropic(base_url=base, api_key="not-a-real-key", max_retries=0)
o = openai.OpenAI(base_url=base + "/v1", api_key="not-a-real-key", max_retries=0)
rules = "Follow the house rules for every answer. " * 300
msgs = [{"role": "user", "content": "hello"}]


def create(system, scope, t):
    r = a.messages.create(model="claude-sonnet-4-5", max_tokens=64, system=system, messages=msgs,
                          extra_headers={"x-toolcost-cache-scope": scope, "x-toolcost-clock": str(t)})
    u = r.usage
    return {"input": u.input_tokens, "write": u.cache_creation_input_tokens or 0,
            "read": u.cache_read_input_tokens or 0}


out = {}
bare = [{"type": "text", "text": rules}]
out["bare"] = [create(bare, "bare", 0), create(bare, "bare", 1)]
marked = [{"type": "text", "text": rules, "cache_control": {"type": "ephemeral"}}]
out["marked_first"] = create(marked, "marked", 0)
c = a.messages.count_tokens(model="claude-sonnet-4-5", system=marked, messages=msgs,
                            extra_headers={"x-toolcost-cache-scope": "marked", "x-toolcost-clock": "1"})
out["count_tokens"] = c.input_tokens
out["marked_repeat"] = create(marked, "marked", 2)
try:
    a.messages.create(model="claude-sonnet-4-5", max_tokens=64, messages=msgs,
                      tools=[{"name": "a", "description": "x", "input_schema": {"type": "object"},
                              "defer_loading": True}])
    out["all_deferred"] = None
except anthropic.BadRequestError as e:
    out["all_deferred"] = {"status": e.status_code, "type": e.body["error"]["type"]}
tools = [{"type": "function", "function": {"name": f"f{i}", "description": "x",
                                           "parameters": {"type": "object", "properties": {}}}}
         for i in range(129)]
try:
    o.chat.completions.create(model="gpt-4o", messages=msgs, tools=tools)
    out["chat_129"] = None
except openai.BadRequestError as e:
    out["chat_129"] = {"status": e.status_code, "type": e.body["type"] if "type" in e.body else e.body["error"]["type"]}
print(json.dumps(out))
