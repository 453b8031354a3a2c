"""`bothub import` trusts nothing in the file (issue 28, point 2): file paths must be plain paths under the
chat's uploads/, numbers must fit the store, and a bad file is refused with its line number, writing nothing."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from bot.tree.jsonl import import_jsonl
from tests.cli.test_cli_forgives import bothub

HEADER = {"type": "header", "root_id": "r0000000", "metadata": {"conversation_id": "c0000000"}}
PICTURE = {"kind": "image", "mime": "image/png", "size": 10, "sha256": "ab" * 32, "path": "uploads/cat.png",
           "name": "cat.png"}


def message(msg_id: str, parent: str, **extra: Any) -> dict[str, Any]:
    return {"type": "message", "msg_id": msg_id, "role": "user", "content": "look", "parent_id": parent, **extra}


def jsonl(*records: dict[str, Any]) -> str:
    return "".join(json.dumps(r) + "\n" for r in (HEADER, *records))


async def test_a_bad_file_is_refused_with_its_line_and_nothing_is_written(tmp_path: Path) -> None:
    good = message("m1", "r0000000", number=1, files=[PICTURE])
    for bad, said in ((message("m2", "m1", number=10**30), "line 3: number must be a whole number from 1"),
                      (message("m2", "m1", files=[{**PICTURE, "path": "/etc/passwd"}]),
                       "line 3: file path '/etc/passwd' must be a plain relative path under uploads/")):
        (tmp_path / "conv.jsonl").write_text(jsonl(good, bad), encoding="utf-8")
        code, _, err = await bothub(tmp_path, "import", "conv.jsonl", "--chat", "console:x")
        assert code == 1 and said in err and "Traceback" not in err, err
    code, out, _ = await bothub(tmp_path, "chats")
    assert code == 0 and out.strip() == "no chats yet"


@pytest.mark.parametrize("path", ["../bothub.sqlite3", "uploads/../../A/x.png", "uploads/./cat.png", "notes.txt",
                                  "uploads/", "uploads", "/abs/uploads/x", "uploads//x", 7])
def test_file_paths_must_be_plain_paths_under_uploads(path: object) -> None:
    with pytest.raises(ValueError, match=r"line 2: file path .* must be a plain relative path under uploads/"):
        import_jsonl(jsonl(message("m1", "r0000000", files=[{**PICTURE, "path": path}])), "")


@pytest.mark.parametrize(("field", "value"), [("number", 0), ("number", 2**31), ("number", True), ("number", "3"),
                                              ("size", -1), ("size", 2**64), ("kind", "sticker"), ("sha256", "x")])
def test_numbers_in_range_and_file_records_complete(field: str, value: object) -> None:
    record = message("m1", "r0000000", number=1, files=[PICTURE])
    if field == "number":
        record["number"] = value
    else:
        record["files"] = [{**PICTURE, field: value}]
    with pytest.raises(ValueError, match=r"^line 2: "):
        import_jsonl(jsonl(record), "")


def test_numbers_are_unique_and_a_good_file_still_imports() -> None:
    with pytest.raises(ValueError, match="line 3: number 1 is used twice"):
        import_jsonl(jsonl(message("m1", "r0000000", number=1), message("m2", "m1", number=1)), "")
    conv = import_jsonl(jsonl(message("m1", "r0000000", number=1, files=[PICTURE]),
                              message("m2", "m1", number=2, timestamp="2026-01-02T03:04:05+08:00")), "")
    assert conv.messages["m1"].files[0].path == "uploads/cat.png"
    assert conv.messages["m2"].created_at.isoformat() == "2026-01-01T19:04:05+00:00"
