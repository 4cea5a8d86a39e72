"""LiteLLM proxy's configuration for the side-by-side bench: one Anthropic model routed to the
upstream in $BENCH_UPSTREAM (toolcost's mock upstream), the same one toolcost's gateway
forwards to. Prints YAML (JSON is YAML)."""

import json
import os

upstream = os.environ["BENCH_UPSTREAM"]
print(json.dumps({
    "model_list": [{
        "model_name": "claude-sonnet-4-5",
        "litellm_params": {"model": "anthropic/claude-sonnet-4-5", "api_base": upstream, "api_key": "bench"},
    }],
    "litellm_settings": {"telemetry": False, "drop_params": True},
    "general_settings": {},
}))
