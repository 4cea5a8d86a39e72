#!/usr/bin/env python3
"""gpt-5.6's paid prompt-cache writes through toolcost's gateway, as the official openai SDK sees
them: the first request of a long prefix writes it, the repeat reads it.

usage: sdk_cache_writes.py BASE_URL
Prints a JSON list with each call's usage fields.
"""
import json
import sys

import openai

base = sys.argv[1]
o = openai.OpenAI(base_url=base + "/v1", api_key="not-a-real-key", max_retries=0)
rules = "Follow the house rules for every answer. " * 300
out = []
for t, text in enumerate(["hello", "hello again"]):
    r = o.responses.create(model="gpt-5.6", instructions=rules, input=text,
                           extra_headers={"x-toolcost-cache-scope": "writes",
                                          "x-toolcost-clock": str(t)})
    u = r.usage
    out.append({"input": u.input_tokens, "cached": u.input_tokens_details.cached_tokens,
                "written": u.input_tokens_details.cache_write_tokens, "output": u.output_tokens})
print(json.dumps(out))
