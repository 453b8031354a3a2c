"""`bothub forget`: a chat's record erased from the command line (the receipt printed, the audit log written),
a person's rows outside chats by platform:id, and a malformed --user refused."""

from __future__ import annotations

import json
from pathlib import Path

from tests.cli.test_cli_forgives import bothub

CONVERSATION = "".join(json.dumps(r) + "\n" for r in (
    {"type": "header", "root_id": "r0000000", "metadata": {"conversation_id": "c0000000"}},
    {"type": "message", "msg_id": "m1", "role": "user", "content": "forget this", "parent_id": "r0000000"},
))


async def test_forget_a_chat_then_a_person(tmp_path: Path) -> None:
    (tmp_path / "conv.jsonl").write_text(CONVERSATION, encoding="utf-8")
    assert (await bothub(tmp_path, "import", "conv.jsonl", "--chat", "telegram:42"))[0] == 0
    code, out, _ = await bothub(tmp_path, "forget", "--chat", "telegram:42")
    assert code == 0 and out.splitlines()[0] == "erased telegram:42:"
    assert "messages: 1" in out and "conversations: 1" in out and "files: 0" in out
    code, out, _ = await bothub(tmp_path, "chats")
    assert out.strip() == "no chats yet"
    code, out, _ = await bothub(tmp_path, "forget", "--user", "telegram:42")
    assert code == 0 and out.strip() == "erased telegram:42:\nfiles: 0"
    code, _, err = await bothub(tmp_path, "forget", "--user", "42")
    assert code == 2 and "--user takes platform:id" in err
