"""Seed 000's JSONL format: a header line, then one message per line in creation order.

The system prompt is not written; on import the caller's current prompt becomes the root.
`author` and `interrupted` are written only when set, so plain conversations match the seed exactly.
"""

from __future__ import annotations

import json
import posixpath
import re
from datetime import UTC, datetime
from typing import Any

from bot.tree.model import ROLES, UPLOADS, AttachedFile, Conversation, Message, new_id, utc_now

FILE_KINDS = ("image", "file", "audio", "video")
MAX_NUMBER = 2**31 - 1  # /goto numbers are 32-bit in PostgreSQL
MAX_FILE_BYTES = 2**53
_SHA256 = re.compile(r"[0-9a-f]{64}")


def _timestamp(dt: datetime) -> str:
    utc = dt.astimezone(UTC) if dt.tzinfo is not None else dt.replace(tzinfo=UTC)
    return utc.isoformat(timespec="microseconds" if utc.microsecond else "seconds").replace("+00:00", "Z")


def export_jsonl(conv: Conversation, metadata: dict[str, Any]) -> str:
    """The whole tree; the header metadata also carries the conversation id and cursor for re-import."""
    meta = {**metadata, "conversation_id": conv.id, "current_message_id": conv.current_message_id}
    lines = [json.dumps({"type": "header", "root_id": conv.root_id, "metadata": meta}, ensure_ascii=False)]
    for msg in conv.messages.values():
        if msg.id == conv.root_id:
            continue
        record: dict[str, Any] = {
            "type": "message",
            "msg_id": msg.id,
            "role": msg.role,
            "content": msg.content,
            "parent_id": msg.parent_id,
            "timestamp": _timestamp(msg.created_at),
            "tool_call_id": msg.tool_call_id,
            "tool_calls": msg.tool_calls,
        }
        if msg.author is not None:
            record["author"] = msg.author
        if msg.author_id is not None:
            record["author_id"] = msg.author_id
        if msg.interrupted:
            record["interrupted"] = True
        if msg.number is not None:
            record["number"] = msg.number  # /tree numbers survive a round trip
        if msg.files:  # references into the chat's folder; the bytes stay there
            record["files"] = [f.to_json() for f in msg.files]
        lines.append(json.dumps(record, ensure_ascii=False))
    return "\n".join(lines) + "\n"


def _field(record: dict[str, Any], name: str, kind: type | tuple[type, ...], lineno: int, required: bool) -> Any:
    value = record.get(name)
    if value is None and not required:
        return None
    if not isinstance(value, kind):
        raise ValueError(f"line {lineno}: field {name!r} is missing or has the wrong type")
    return value


def _whole(record: dict[str, Any], name: str, lineno: int, low: int, high: int) -> int | None:
    """An optional whole number in [low, high]: a bool is no number, and a huge one must not reach the store."""
    value = record.get(name)
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int) or not low <= value <= high:
        raise ValueError(f"line {lineno}: {name} must be a whole number from {low} to {high}, not {value!r}")
    return value


def _attached(data: object, lineno: int) -> AttachedFile:
    """A file record whose path the bot itself could have written: `uploads/<name>`, relative and normalised.

    The path is read on the next turn and sent to the model; an absolute or `../` one would reach outside."""
    if not isinstance(data, dict):
        raise ValueError(f"line {lineno}: files must be a list of file records")
    path = data.get("path")
    if not isinstance(path, str) or posixpath.normpath(path) != path or path.split("/")[0] != UPLOADS \
            or len(path.split("/")) < 2 or any(part in ("", ".", "..") for part in path.split("/")):
        raise ValueError(f"line {lineno}: file path {path!r} must be a plain relative path under {UPLOADS}/")
    texts = {name: data.get(name, "") for name in ("kind", "mime", "sha256", "name")}
    if not all(isinstance(v, str) for v in texts.values()) or texts["kind"] not in FILE_KINDS \
            or not _SHA256.fullmatch(str(texts["sha256"])):
        raise ValueError(f"line {lineno}: a file record needs a kind ({', '.join(FILE_KINDS)}), a mime type "
                         "and a 64-digit sha256")
    size = _whole(data, "size", lineno, 0, MAX_FILE_BYTES)
    return AttachedFile(texts["kind"], texts["mime"], size or 0, texts["sha256"], path, texts["name"])


def _created(record: dict[str, Any], lineno: int) -> datetime:
    stamp = _field(record, "timestamp", str, lineno, False)
    try:
        created = datetime.fromisoformat(stamp) if stamp else utc_now()
        return created.astimezone(UTC) if created.tzinfo else created.replace(tzinfo=UTC)
    except (ValueError, OverflowError):
        raise ValueError(f"line {lineno}: bad timestamp {stamp!r}") from None


def _parse_message(record: dict[str, Any], lineno: int) -> Message:
    role = _field(record, "role", str, lineno, True)
    if role not in ROLES or role == "system":
        raise ValueError(f"line {lineno}: role must be user, assistant or tool, not {role!r}")
    tool_calls = _field(record, "tool_calls", list, lineno, False)
    if tool_calls is not None and not all(isinstance(c, dict) for c in tool_calls):
        raise ValueError(f"line {lineno}: tool_calls must be a list of objects")
    files = _field(record, "files", list, lineno, False) or []
    return Message(
        id=_field(record, "msg_id", str, lineno, True),
        role=role,
        parent_id=_field(record, "parent_id", str, lineno, True),
        content=_field(record, "content", str, lineno, True),
        created_at=_created(record, lineno),
        tool_calls=tool_calls,
        tool_call_id=_field(record, "tool_call_id", str, lineno, False),
        author=_field(record, "author", str, lineno, False),
        author_id=_field(record, "author_id", str, lineno, False),
        interrupted=bool(_field(record, "interrupted", bool, lineno, False)),
        number=_whole(record, "number", lineno, 1, MAX_NUMBER),
        files=tuple(_attached(f, lineno) for f in files),
    )


def import_jsonl(text: str, system_prompt: str) -> Conversation:
    """Parse and validate; every problem is a ValueError naming the line. Parents must come first."""
    conv: Conversation | None = None
    cursor: str | None = None
    numbers: set[int] = set()
    # "\n" only: str.splitlines() also breaks at U+0085, U+2028 and the like, which JSON keeps raw inside strings
    for lineno, line in enumerate(text.split("\n"), start=1):
        if not line.strip():
            continue
        try:
            record = json.loads(line)
        except json.JSONDecodeError as exc:
            raise ValueError(f"line {lineno}: not valid JSON ({exc.msg})") from None
        if not isinstance(record, dict):
            raise ValueError(f"line {lineno}: expected a JSON object")
        kind = record.get("type")
        if conv is None:
            if kind != "header":
                raise ValueError(f"line {lineno}: the first line must be the header")
            root_id = _field(record, "root_id", str, lineno, True)
            meta = record.get("metadata") or {}
            if not isinstance(meta, dict):
                raise ValueError(f"line {lineno}: metadata must be an object")
            conv_id = meta.get("conversation_id")
            conv = Conversation(system_prompt, id=conv_id if isinstance(conv_id, str) else new_id(), root_id=root_id)
            cursor = meta.get("current_message_id") if isinstance(meta.get("current_message_id"), str) else None
            continue
        if kind != "message":
            raise ValueError(f"line {lineno}: unknown line type {kind!r}")
        msg = _parse_message(record, lineno)
        if msg.number is not None and msg.number in numbers:
            raise ValueError(f"line {lineno}: number {msg.number} is used twice")
        if msg.number is not None:
            numbers.add(msg.number)
        try:
            conv.add_message(msg)
        except (KeyError, ValueError) as exc:
            raise ValueError(f"line {lineno}: {exc.args[0]}") from None
    if conv is None:
        raise ValueError("empty file: no header line")
    if cursor in conv.messages:
        conv.change_current_message(cursor)
    return conv
