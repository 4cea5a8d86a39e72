#!/usr/bin/env python3
"""The official google-genai Python SDK against toolcost's gateway (mock upstream), unchanged
but for its base URL: generate (with two function declarations and a function call back),
stream, count_tokens, and a refused request.

usage: sdk_gemini.py BASE_URL
Prints one JSON list: what the SDK parsed from each answer, in request order.
"""
import json
import sys

from google import genai
from google.genai import errors, types

base = sys.argv[1]
out = []


clients = []  # kept open: a client closes its connection pool when it is collected


def client(next_step=None, version=None):
    headers = {}
    if next_step is not None:
        headers["x-toolcost-next"] = json.dumps(next_step)
    opts = {"base_url": base, "headers": headers}
    if version:
        opts["api_version"] = version
    clients.append(genai.Client(api_key="not-a-real-key", http_options=types.HttpOptions(**opts)))
    return clients[-1]


weather = types.FunctionDeclaration(
    name="get_weather",
    description="The weather in a city today.",
    parameters_json_schema={"type": "object", "properties": {"city": {"type": "string"}},
                            "required": ["city"]},
)
clock = types.FunctionDeclaration(
    name="get_time",
    description="The local time in a time zone.",
    parameters=types.Schema(type="OBJECT", properties={"zone": types.Schema(type="STRING")}),
)
config = types.GenerateContentConfig(
    system_instruction="You answer briefly.",
    tools=[types.Tool(function_declarations=[weather, clock])],
    tool_config=types.ToolConfig(function_calling_config=types.FunctionCallingConfig(mode="AUTO")),
    automatic_function_calling=types.AutomaticFunctionCallingConfig(disable=True),
)
prompt = "What is the weather in Lisbon?"


def usage(u):
    return {"input": u.prompt_token_count or 0, "cached": u.cached_content_token_count or 0,
            "output": (u.candidates_token_count or 0) + (u.thoughts_token_count or 0)}


r = client({"tool": "get_weather", "input": {"city": "Lisbon"}}).models.generate_content(
    model="gemini-3.5-flash", contents=prompt, config=config)
call = r.candidates[0].content.parts[0].function_call
assert call.name == "get_weather" and call.args == {"city": "Lisbon"}, r
out.append({"call": "generate", "stream": False, **usage(r.usage_metadata)})

# The call answered: the model's turn and the function's response go back.
history = [types.Content(role="user", parts=[types.Part(text=prompt)]), r.candidates[0].content,
           types.Content(role="user", parts=[types.Part.from_function_response(
               name="get_weather", response={"output": "Sunny, 21 C"})])]
r = client({"text": "Sunny in Lisbon."}, version="v1beta").models.generate_content(
    model="gemini-3.5-flash", contents=history, config=config)
assert r.text == "Sunny in Lisbon.", r
out.append({"call": "generate", "stream": False, **usage(r.usage_metadata)})

text = ""
last = None
for chunk in client({"text": "It is nine o'clock."}).models.generate_content_stream(
        model="gemini-3.5-flash", contents="What time is it?", config=config):
    text += chunk.text or ""
    last = chunk
assert text == "It is nine o'clock.", text
out.append({"call": "stream", "stream": True, **usage(last.usage_metadata)})

c = client().models.count_tokens(model="gemini-3.5-flash", contents=prompt)
out.append({"call": "count_tokens", "count_tokens": c.total_tokens})

try:
    bad = types.GenerateContentConfig(tools=[types.Tool(function_declarations=[
        types.FunctionDeclaration(name="9 bad name", description="x")])])
    client().models.generate_content(model="gemini-3.5-flash", contents=prompt, config=bad)
    out.append({"call": "refused", "error": None})
except errors.APIError as e:
    out.append({"call": "refused", "error": e.code, "status": e.status})

print(json.dumps(out))
