"""Validate request bodies against the official SDKs' own request types.

Reads a JSON list of {"name", "format", "body"} from the file named by argv[1] and checks each
body with pydantic against the anthropic SDK's beta MessageCreateParams (Messages bodies) or
the openai SDK's ResponseCreateParams (Responses bodies). Every TypedDict of both SDKs is
closed to unknown keys first, and lazily validated iterables are walked, so a misspelt field
or a block of the wrong shape fails. As controls, each body is also checked with an unknown key
added to its last conversation item, and with one added inside the mechanism's own object (the
tool change's `tool`, a tool with `allowed_callers`, the item's first tool, the `tool_choice`);
both must fail. Prints a JSON list of {"name", "ok", "error", "control_refused", "inner_refused"}.
"""

import importlib
import json
import pkgutil
import sys
import warnings

import pydantic
from pydantic import ConfigDict, TypeAdapter
from typing_extensions import is_typeddict

warnings.simplefilter("ignore")


def close_typeddicts(package):
    """Forbid unknown keys on every TypedDict defined under `package`."""
    root = importlib.import_module(package)
    for info in pkgutil.walk_packages(root.__path__, package + "."):
        try:
            module = importlib.import_module(info.name)
        except Exception:
            continue
        for obj in vars(module).values():
            if isinstance(obj, type) and is_typeddict(obj) and obj.__module__ == module.__name__:
                obj.__pydantic_config__ = ConfigDict(extra="forbid", arbitrary_types_allowed=True)


def walk(value):
    """Consume every lazily validated iterable, so that its items are validated too."""
    if isinstance(value, dict):
        return {k: walk(v) for k, v in value.items()}
    if value is None or isinstance(value, (str, bytes, int, float, bool)):
        return value
    try:
        items = iter(value)
    except TypeError:
        return value
    return [walk(v) for v in items]


close_typeddicts("anthropic.types")
close_typeddicts("openai.types")
from anthropic.types.beta import message_create_params as anthropic_params  # noqa: E402
from openai.types.responses import response_create_params as openai_params  # noqa: E402

ADAPTERS = {
    "anthropic-messages": TypeAdapter(anthropic_params.MessageCreateParamsNonStreaming),
    "openai-responses": TypeAdapter(openai_params.ResponseCreateParamsNonStreaming),
}


def check(adapter, body):
    try:
        walk(adapter.validate_python(body))
        return None
    except pydantic.ValidationError as e:
        return str(e).splitlines()[0] + ": " + " | ".join(str(e).splitlines()[1:4])


def inner(body):
    """The mechanism's own innermost object in `body`, to put an unknown key in."""
    if isinstance(body.get("tool_choice"), dict):
        return body["tool_choice"]
    for tool in body.get("tools", []):
        if "allowed_callers" in tool:
            return tool
    for item in body.get("messages", body.get("input", [])):
        if item.get("type") == "additional_tools":
            return item["tools"][0]
        for block in item.get("content", []) if isinstance(item.get("content"), list) else []:
            if block.get("type") == "tool_addition":
                return block["tool"]
    return None


out = []
for item in json.load(open(sys.argv[1])):
    adapter = ADAPTERS[item["format"]]
    body = item["body"]
    error = check(adapter, body)
    key = "messages" if item["format"] == "anthropic-messages" else "input"
    control = json.loads(json.dumps(body))
    control[key][-1]["not_a_field"] = 1
    nested = json.loads(json.dumps(body))
    target = inner(nested)
    if target is not None:
        target["not_a_field"] = 1
    out.append({"name": item["name"], "ok": error is None, "error": error,
                "control_refused": check(adapter, control) is not None,
                "inner_refused": target is not None and check(adapter, nested) is not None})
print(json.dumps(out))
