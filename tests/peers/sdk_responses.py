#!/usr/bin/env python3
"""The official openai Python SDK's Responses client against toolcost's gateway (mock upstream):
`client.responses.create`, whole and streamed, with a hosted `tool_search` tool, deferred
functions and a namespace whose member is deferred.

usage: sdk_responses.py BASE_URL
Prints one JSON array: the usage the SDK parsed from each answer, in request order.
"""
import json
import sys

import openai

base = sys.argv[1]
o = openai.OpenAI(base_url=base + "/v1", api_key="not-a-real-key", max_retries=0)
obj = {"type": "object", "properties": {"zone": {"type": "string", "description": "IANA time zone"}}}
tools = [
    {"type": "tool_search"},
    {"type": "function", "name": "shell", "description": "Run a command",
     "parameters": {"type": "object", "properties": {"command": {"type": "array", "items": {"type": "string"}}}}},
    {"type": "function", "name": "NOW", "description": "The current time in a time zone",
     "parameters": obj, "defer_loading": True},
    {"type": "function", "name": "WEATHER", "description": "Weather forecast for a city",
     "parameters": {"type": "object", "properties": {"city": {"type": "string"}}}, "defer_loading": True},
    {"type": "namespace", "name": "crm", "description": "Customer records and orders",
     "tools": [{"type": "function", "name": "list_open_orders", "description": "Open orders of a customer",
                "parameters": {"type": "object", "properties": {"customer": {"type": "string"}}},
                "defer_loading": True}]},
]
step = {"search": {"query": "current time zone"}, "then": {"tool": "NOW", "input": {"zone": "UTC"}}}
out = []


def usage(u, stream):
    return {"stream": stream, "input": u.input_tokens, "cached": u.input_tokens_details.cached_tokens,
            "output": u.output_tokens, "reasoning": u.output_tokens_details.reasoning_tokens}


r = o.responses.create(model="gpt-5.4", instructions="You are terse.", input="what time is it", tools=tools,
                       extra_headers={"x-toolcost-next": json.dumps(step)})
first = r
kinds = [i.type for i in r.output]
assert kinds == ["tool_search_call", "tool_search_output", "function_call"], kinds
assert r.output[0].execution == "server", r.output[0]
loaded = [t.name for t in r.output[1].tools]
assert "NOW" in loaded, loaded
assert r.output[2].name == "NOW" and json.loads(r.output[2].arguments) == {"zone": "UTC"}, r.output[2]
out.append(usage(r.usage, False))

events = list(o.responses.create(model="gpt-5.4", instructions="You are terse.",
                                 input=[{"role": "user", "content": "what time is it"}], tools=tools, stream=True,
                                 extra_headers={"x-toolcost-next": json.dumps(step)}))
types = [e.type for e in events]
assert types[0] == "response.created" and types[-1] == "response.completed", types
assert "response.function_call_arguments.delta" in types, types
done = [e.item.type for e in events if e.type == "response.output_item.done"]
assert done == ["tool_search_call", "tool_search_output", "function_call"], done
out.append(usage(events[-1].response.usage, True))

r = o.responses.create(model="gpt-5.4", input="what time is it",
                       extra_headers={"x-toolcost-next": json.dumps({"text": "It is nine."})})
assert r.output_text == "It is nine.", r
out.append(usage(r.usage, False))
events = list(o.responses.create(model="gpt-5.4", input="what time is it", stream=True))
text = "".join(e.delta for e in events if e.type == "response.output_text.delta")
assert text == "Done.", text
out.append(usage(events[-1].response.usage, True))
try:
    o.responses.create(model="gpt-5.4", input=[])
except openai.BadRequestError as e:
    out.append({"error": e.status_code})

# Round two without previous_response_id: every output item goes back as input, with the
# function's result; the definitions the hosted search loaded stay in the conversation.
history = [{"role": "user", "content": "what time is it"}]
history += [i.model_dump(exclude_none=True) for i in first.output]
history.append({"type": "function_call_output", "call_id": first.output[2].call_id, "output": "12:00 UTC"})
r = o.responses.create(model="gpt-5.4", instructions="You are terse.", input=history, tools=tools,
                       extra_headers={"x-toolcost-next": json.dumps({"text": "It is noon."})})
assert r.output_text == "It is noon.", r
out.append(usage(r.usage, False))

# Client execution: the model stops at a `tool_search_call`; the client searches and answers
# with its own `tool_search_output` carrying the loaded definition, then the model calls it.
search_tool = {"type": "tool_search", "execution": "client", "description": "Search the deferred tools",
               "parameters": {"type": "object", "properties": {"query": {"type": "string"}}, "required": ["query"]}}
ctools = [search_tool] + tools[1:]
events = list(o.responses.create(model="gpt-5.4", instructions="You are terse.", input="what time is it",
                                 tools=ctools, stream=True,
                                 extra_headers={"x-toolcost-next": json.dumps({"search": {"query": "current time"}})}))
call = [e.item for e in events if e.type == "response.output_item.done"]
assert [c.type for c in call] == ["tool_search_call"] and call[0].execution == "client", call
out.append(usage(events[-1].response.usage, True))
now = dict(tools[2])
now.pop("defer_loading")
history = [{"role": "user", "content": "what time is it"}, call[0].model_dump(exclude_none=True),
           {"type": "tool_search_output", "call_id": call[0].call_id, "execution": "client",
            "status": "completed", "tools": [now]}]
r = o.responses.create(model="gpt-5.4", instructions="You are terse.", input=history, tools=ctools,
                       extra_headers={"x-toolcost-next": json.dumps({"tool": "NOW", "input": {"zone": "UTC"}})})
assert [i.type for i in r.output] == ["function_call"] and r.output[0].name == "NOW", r.output
out.append(usage(r.usage, False))
print(json.dumps(out))
