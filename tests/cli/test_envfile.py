"""`.env` files read as python-dotenv reads them, never overriding the environment; unknown BOTHUB_* names named."""

from __future__ import annotations

import asyncio
import os
import re
import sys
from pathlib import Path

from bot.cli import envfile

REPO = Path(__file__).resolve().parents[2]


def test_the_common_shapes_parse(tmp_path: Path) -> None:
    path = tmp_path / ".env"
    path.write_text("# a comment\n\nexport A=1\nB = two words  # a note\nC='quoted # kept'\nD=\"x=y\"\n"
                    "  # indented comment\nBARE\nE=\nF=   # webhook mode only\nG=\"two\nlines\"\n", encoding="utf-8")
    assert envfile.parse(path) == {"A": "1", "B": "two words", "C": "quoted # kept", "D": "x=y", "E": "",
                                   "F": "", "G": "two\nlines"}


def test_the_example_file_sets_no_comment_as_a_value(tmp_path: Path) -> None:
    """Friction 6: `FEISHU_ENCRYPT_KEY=   # webhook mode only` once set the comment as the key."""
    text = (REPO / ".env.example").read_text(encoding="utf-8")
    uncommented = tmp_path / ".env"  # every example variable switched on, as a user filling it in would
    uncommented.write_text("\n".join(re.sub(r"^# ([A-Z_]+=)", r"\1", line) for line in text.splitlines()),
                           encoding="utf-8")
    values = envfile.parse(uncommented)
    assert "BOTHUB_ADMIN_PASSWORD" in values and "FEISHU_ENCRYPT_KEY" in values
    assert not [name for name, value in values.items() if "#" in value or value.strip() != value]
    assert not [line for line in text.splitlines() if "=" in line and " #" in line.split("=", 1)[1]]


def test_set_variables_win_and_a_missing_file_is_fine(tmp_path: Path) -> None:
    path = tmp_path / ".env"
    assert envfile.load(path, {}) == []
    path.write_text("A=from-file\nB=from-file\n", encoding="utf-8")
    environ = {"A": "already set"}
    assert envfile.load(path, environ) == ["B"]
    assert environ == {"A": "already set", "B": "from-file"}


def test_an_unread_bothub_variable_is_named_with_the_likely_one() -> None:
    assert envfile.unknown_names(["BOTHUB_PROT", "BOTHUB_PORT", "PATH", "BOTHUB_NOTHING_LIKE_IT"]) == [
        ("BOTHUB_NOTHING_LIKE_IT", None), ("BOTHUB_PROT", "BOTHUB_PORT")]


async def test_bothub_warns_about_a_misspelt_variable_from_dotenv(tmp_path: Path) -> None:
    (tmp_path / ".env").write_text("export BOTHUB_LANGAUGE=zh   # a typo\nOPENAI_BASE_URL=http://127.0.0.1:9/v1\n",
                                   encoding="utf-8")
    env = {k: v for k, v in os.environ.items() if not k.startswith(("BOTHUB_", "OPENAI_"))}
    proc = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "bot", "--data-dir", str(tmp_path / "data"), "chats", cwd=tmp_path, env=env,
        stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE)
    _, err = await asyncio.wait_for(proc.communicate(), 60)
    assert proc.returncode == 1 and b"no database" in err  # `chats` before any start: said after the warning
    assert "BOTHUB_LANGAUGE is set, but bothub reads no variable of that name — did you mean BOTHUB_LANGUAGE?" \
        in err.decode()
