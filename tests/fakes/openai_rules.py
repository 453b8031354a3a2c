"""What the Chat Completions API refuses, with the real status, message, param and code.

Kept apart from the server so each rule reads on its own: the key check (401) and request validation
(400: messages in a valid order, tools the API accepts).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

TOOL_NAME = re.compile(r"[a-zA-Z0-9_-]+")
TOOL_NAME_MAX = 64


@dataclass(frozen=True)
class Refusal:
    """One refusal as the API words it: the body is {"error": {message, type, param, code}}."""

    status: int
    message: str
    param: str | None = None
    code: str | None = None


def check_key(authorization: str | None, expected: str | None) -> Refusal | None:
    """`expected=None` is a local server that ignores keys (vLLM, Ollama); the SDK always sends one."""
    if not authorization or not authorization.startswith("Bearer ") or not authorization[7:].strip():
        return Refusal(401, "You didn't provide an API key. You need to provide your API key in an Authorization "
                            "header using Bearer auth (i.e. Authorization: Bearer YOUR_KEY).")
    key = authorization[7:]
    if expected is not None and key != expected:
        shown = f"{key[:3]}{'*' * max(0, len(key) - 7)}{key[-4:]}" if len(key) > 8 else key
        return Refusal(401, f"Incorrect API key provided: {shown}. You can find your API key at "
                            "https://platform.openai.com/account/api-keys.", code="invalid_api_key")
    return None


def check_request(body: Any) -> Refusal | None:
    if not isinstance(body, dict) or not body.get("model"):
        return Refusal(400, "you must provide a model parameter")
    messages = body.get("messages")
    if not isinstance(messages, list) or not messages:
        return Refusal(400, "'messages' must be a non-empty array", "messages")
    return _check_tools(body) or _check_messages(messages)


def _check_name(name: Any, param: str) -> Refusal | None:
    if not isinstance(name, str) or not TOOL_NAME.fullmatch(name):
        return Refusal(400, f"Invalid '{param}': string does not match pattern. Expected a string that matches "
                            f"the pattern '^[a-zA-Z0-9_-]+$'.", param, "invalid_value")
    if len(name) > TOOL_NAME_MAX:
        return Refusal(400, f"Invalid '{param}': string too long. Expected a string with maximum length "
                            f"{TOOL_NAME_MAX}, but got a string with length {len(name)} instead.",
                       param, "string_above_max_length")
    return None


def _check_tools(body: dict[str, Any]) -> Refusal | None:
    if "tools" not in body:
        return None
    tools = body["tools"]
    if not isinstance(tools, list) or not tools:
        return Refusal(400, "Invalid 'tools': empty array. Expected an array with minimum length 1, but got an "
                            "empty array instead.", "tools", "empty_array")
    for i, tool in enumerate(tools):
        function = tool.get("function") if isinstance(tool, dict) else None
        if not isinstance(tool, dict) or tool.get("type") != "function" or not isinstance(function, dict):
            return Refusal(400, f"Missing required parameter: 'tools[{i}].function'.", f"tools[{i}].function",
                           "missing_required_parameter")
        if problem := _check_name(function.get("name"), f"tools[{i}].function.name"):
            return problem
        schema = function.get("parameters", {"type": "object", "properties": {}})
        kind = schema.get("type") if isinstance(schema, dict) else None
        if kind != "object":
            return Refusal(400, f"Invalid schema for function '{function['name']}': schema must be a JSON Schema "
                                f"of 'type: \"object\"', got 'type: \"{kind}\"'.",
                           f"tools[{i}].function.parameters", "invalid_function_parameters")
    return None


def _check_messages(messages: list[Any]) -> Refusal | None:
    pending: set[str] = set()
    for i, m in enumerate(messages):
        role = m.get("role") if isinstance(m, dict) else None
        if role not in ("system", "developer", "user", "assistant", "tool"):
            return Refusal(400, f"Invalid value: {role!r}. Supported values are: 'system', 'assistant', 'user', "
                                "'tool', 'function', and 'developer'.", f"messages[{i}].role", "invalid_value")
        if pending and role != "tool":
            return Refusal(400, "An assistant message with 'tool_calls' must be followed by tool messages "
                                f"responding to each 'tool_call_id'. The following tool_call_ids did not have "
                                f"response messages: {', '.join(sorted(pending))}", f"messages.[{i}].role")
        if role == "tool":
            if m.get("tool_call_id") not in pending:
                return Refusal(400, "Invalid parameter: messages with role 'tool' must be a response to a "
                                    "preceeding message with 'tool_calls'.", f"messages.[{i}].role")
            pending.discard(m["tool_call_id"])
        elif role == "assistant" and m.get("tool_calls"):
            for k, call in enumerate(m["tool_calls"]):
                name = (call.get("function") or {}).get("name")
                if problem := _check_name(name, f"messages[{i}].tool_calls[{k}].function.name"):
                    return problem
            pending = {c.get("id") for c in m["tool_calls"]}
    if pending:
        return Refusal(400, "An assistant message with 'tool_calls' must be followed by tool messages responding "
                            f"to each 'tool_call_id'. The following tool_call_ids did not have response messages: "
                            f"{', '.join(sorted(pending))}", "messages")
    return None
