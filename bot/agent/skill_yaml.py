"""Typed YAML skills (seed 001): `system_prompt`, `tools`, `model`, `max_turns`, declared `input.args` that the
tool's JSON schema carries and that are checked before the skill runs, and `output.directory` in the chat folder.

A YAML skill is always a tool skill: a nested agent with its own prompt and tool subset (bot/agent/skill_tools.py).
"""

from __future__ import annotations

import asyncio
import re
from dataclasses import dataclass
from typing import Any

import yaml

from bot import jail
from bot.agent.tools import files
from bot.agent.tools.registry import ToolContext

ARG_TYPES = {"string": "string", "file": "string", "url": "string", "integer": "integer", "number": "number",
             "boolean": "boolean"}
DEFAULT_OUTPUT = "skill-output"
MAX_ARGS = 12
_OUTPUT_RE = re.compile(r"^[A-Za-z0-9_][A-Za-z0-9_.-]{0,63}$")  # one folder name: never '..', never a path


@dataclass(frozen=True)
class SkillArg:
    name: str
    type: str = "string"
    required: bool = False
    description: str = ""

    def schema(self) -> dict[str, Any]:
        hint = {"file": "path of a file in this chat's folder", "url": "an http(s) URL"}.get(self.type, "")
        text = "; ".join(t for t in (self.description, hint) if t)
        return {"type": ARG_TYPES[self.type], **({"description": text} if text else {})}


def parse_args(raw: object, error: type[ValueError]) -> list[SkillArg]:
    """`input.args` as declared: a list of {name, type, required, description}."""
    if raw is None:
        return []
    if not isinstance(raw, list) or len(raw) > MAX_ARGS:
        raise error(f"'input.args' must be a list of at most {MAX_ARGS} arguments")
    args: list[SkillArg] = []
    for item in raw:
        if not isinstance(item, dict) or not re.match(r"^[a-z][a-z0-9_]{0,31}$", str(item.get("name", ""))):
            raise error("each of 'input.args' needs a 'name': lower-case letters, digits or '_'")
        kind = item.get("type", "string")
        if kind not in ARG_TYPES:
            raise error(f"argument {item['name']!r}: 'type' must be one of {', '.join(ARG_TYPES)}")
        if item["name"] == "task" or item["name"] in {a.name for a in args}:
            raise error(f"argument {item['name']!r} is declared twice (or is 'task', which every skill has)")
        args.append(SkillArg(item["name"], kind, item.get("required") is True, str(item.get("description") or "")))
    return args


def parse_output(raw: object, error: type[ValueError]) -> str:
    """`output.directory`: one folder name inside the chat folder, where the skill writes what it makes."""
    if raw is None:
        return DEFAULT_OUTPUT
    directory = raw.get("directory", DEFAULT_OUTPUT) if isinstance(raw, dict) else None
    if not isinstance(directory, str) or not _OUTPUT_RE.match(directory) or ".." in directory:
        raise error("'output.directory' must be one folder name (letters, digits, '.', '-', '_'), not a path")
    return directory


def load_yaml(text: str, error: type[ValueError]) -> dict[str, Any]:
    try:
        meta = yaml.safe_load(text)
    except yaml.YAMLError as e:
        raise error(f"not valid YAML: {e}") from e
    if not isinstance(meta, dict):
        raise error("a YAML skill must be a mapping of fields")
    if not isinstance(meta.get("system_prompt"), str) or not meta["system_prompt"].strip():
        raise error("'system_prompt' is required: the instructions the skill runs with")
    return meta


def parameters(args: list[SkillArg]) -> dict[str, Any]:
    """The tool's JSON schema: `task` (what to do) and each declared argument."""
    properties: dict[str, Any] = {
        "task": {"type": "string", "description": "What the skill should do, with all needed details"}}
    properties.update({a.name: a.schema() for a in args})
    return {"type": "object", "properties": properties, "required": [a.name for a in args if a.required]}


async def check_inputs(args: list[SkillArg], given: dict[str, Any], ctx: ToolContext) -> str | None:
    """Why these arguments do not fit the declaration, worded for the model; None when they fit."""
    declared = {a.name: a for a in args}
    if unknown := sorted(set(given) - set(declared) - {"task"}):
        return f"Error: unknown argument(s) {', '.join(unknown)}; declared: {', '.join(declared) or 'none'}"
    for arg in args:
        value = given.get(arg.name)
        if value is None:
            if arg.required:
                return f"Error: argument {arg.name!r} is required"
            continue
        if problem := await _check_value(arg, value, ctx):
            return f"Error: argument {arg.name!r}: {problem}"
    return None


async def _check_value(arg: SkillArg, value: object, ctx: ToolContext) -> str | None:
    types: dict[str, type | tuple[type, ...]] = {"integer": int, "number": (int, float), "boolean": bool}
    expected = types.get(arg.type, str)
    if not isinstance(value, expected) or (arg.type in ("integer", "number") and isinstance(value, bool)):
        return f"must be of type {ARG_TYPES[arg.type]}"
    if arg.type == "url" and not re.match(r"^https?://\S+$", str(value)):
        return "must be an http(s) URL"
    if arg.type == "file":
        try:
            found = await asyncio.to_thread(files.kind, ctx.workdir, str(value))
        except files.Refused as e:
            return str(e).removeprefix("Error: ")
        if found != "file":
            return f"no file {value!r} in this chat's folder"
    return None


async def output_folder(ctx: ToolContext, directory: str) -> str:
    """Make the skill's output folder in the chat folder; returns how the prompt names it."""
    def make() -> None:
        with jail.directory(ctx.workdir, directory, create=True):
            pass

    await asyncio.to_thread(make)
    return directory
