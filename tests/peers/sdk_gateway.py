#!/usr/bin/env python3
"""The official anthropic and openai Python SDKs against toolcost's gateway (mock upstream).

usage: sdk_gateway.py BASE_URL
Prints one JSON object: the usage each SDK parsed from each answer, in request order.
"""
import json
import sys

import anthropic
import openai

base = sys.argv[1]
out = []

a = anthropic.Anthropic(base_url=base, api_key="not-a-real-key", max_retries=0)
msgs = [{"role": "user", "content": "what time is it"}]
tools = [{"name": "NOW", "description": "Current time", "input_schema": {"type": "object", "properties": {}}}]
r = a.messages.create(model="claude-sonnet-4.5", max_tokens=64, messages=msgs, tools=tools,
                      extra_headers={"x-toolcost-next": json.dumps({"tool": "NOW", "input": {}})})
assert r.content[0].type == "tool_use" and r.content[0].name == "NOW", r
out.append({"sdk": "anthropic", "stream": False, "input": r.usage.input_tokens + (r.usage.cache_read_input_tokens or 0)
            + (r.usage.cache_creation_input_tokens or 0), "output": r.usage.output_tokens})
with a.messages.stream(model="claude-sonnet-4.5", max_tokens=64, messages=msgs,
                       extra_headers={"x-toolcost-next": json.dumps({"text": "It is nine o'clock."})}) as s:
    text = "".join(s.text_stream)
    final = s.get_final_message()
assert text == "It is nine o'clock.", text
out.append({"sdk": "anthropic", "stream": True, "input": final.usage.input_tokens + (final.usage.cache_read_input_tokens or 0)
            + (final.usage.cache_creation_input_tokens or 0), "output": final.usage.output_tokens})
c = a.messages.count_tokens(model="claude-sonnet-4.5", messages=msgs, tools=tools)
out.append({"sdk": "anthropic", "count_tokens": c.input_tokens})

o = openai.OpenAI(base_url=base + "/v1", api_key="not-a-real-key", max_retries=0)
r = o.chat.completions.create(model="gpt-4o", messages=msgs)
assert r.choices[0].message.content == "Done.", r
out.append({"sdk": "openai", "stream": False, "input": r.usage.prompt_tokens, "output": r.usage.completion_tokens})
chunks = list(o.chat.completions.create(model="gpt-4o", messages=msgs, stream=True, stream_options={"include_usage": True},
                                        extra_headers={"x-toolcost-next": json.dumps({"tool": "NOW", "input": {}})}))
calls = [tc.function.name for ch in chunks for choice in ch.choices for tc in (choice.delta.tool_calls or [])]
assert calls == ["NOW"], calls
usage = [ch.usage for ch in chunks if ch.usage][-1]
out.append({"sdk": "openai", "stream": True, "input": usage.prompt_tokens, "output": usage.completion_tokens})
try:
    o.chat.completions.create(model="gpt-4o", messages=[])
except openai.BadRequestError as e:
    out.append({"sdk": "openai", "error": e.status_code})
print(json.dumps(out))
