"""The `bothub` command as a newcomer types it (issue 12 §5): options anywhere, --version, help, .env, chats."""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import sys
from pathlib import Path

import pytest

from bot.adapter import installed_specs
from bot.cli.main import build_parser
from tests.fakes.openai_api import FakeOpenAI

REPO = Path(__file__).resolve().parents[2]


def clean_env(**extra: str) -> dict[str, str]:
    keep = {k: v for k, v in os.environ.items() if not k.startswith(("BOTHUB_", "OPENAI_", "TELEGRAM_", "DISCORD_",
                                                                     "FEISHU_", "SLACK_"))}
    return keep | {"PYTHONPATH": str(REPO)} | extra


async def bothub(cwd: Path, *args: str, stdin: str = "", env: dict[str, str] | None = None) -> tuple[int, str, str]:
    proc = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "bot", *args, cwd=cwd, env=env or clean_env(),
        stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE)
    out, err = await asyncio.wait_for(proc.communicate(stdin.encode()), 40)
    return proc.returncode or 0, out.decode(), err.decode()


async def test_version_and_help_for_every_subcommand_and_argument(tmp_path: Path) -> None:
    code, out, _ = await bothub(tmp_path, "--version")
    assert code == 0 and out.startswith("bothub 0.")
    parser = build_parser(installed_specs())
    subparsers = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    described = {choice.dest: choice.help for choice in subparsers._choices_actions}
    assert set(described) == set(subparsers.choices) and all(described.values())
    for name, sub in [("bothub", parser), *subparsers.choices.items()]:
        missing = [a.dest for a in sub._actions if not a.help and not isinstance(a, argparse._SubParsersAction)]
        assert not missing, (name, missing)


async def test_global_options_work_after_the_subcommand_and_dotenv_is_read(tmp_path: Path, fake: FakeOpenAI) -> None:
    fake.api_key = "from-dotenv"  # the fake refuses any other key
    (tmp_path / ".env").write_text(
        f"# the LLM\nexport OPENAI_BASE_URL={fake.base_url}\nOPENAI_API_KEY='from-dotenv'\nBOTHUB_MODEL=from-dotenv\n",
        encoding="utf-8")
    env = clean_env(BOTHUB_MODEL="fake-model")  # already set: the .env line must not override it
    code, out, err = await bothub(tmp_path, "chat", "--data-dir", str(tmp_path / "elsewhere"), "--chat", "x",
                                  stdin="hello\n", env=env)
    assert code == 0, err
    assert "hello" in out
    assert (tmp_path / "elsewhere" / "bothub.sqlite3").exists() and not (tmp_path / "data").exists()
    request = fake.requests[-1]
    assert request["body"]["model"] == "fake-model"
    assert request["headers"]["Authorization"] == "Bearer from-dotenv"

    (tmp_path / "bothub.yaml").write_text("max_queu: 3\n", encoding="utf-8")
    code, _, err = await bothub(tmp_path, "run", "--config", str(tmp_path / "bothub.yaml"), env=env)
    assert code == 2 and "did you mean 'max_queue'?" in err


@pytest.mark.timeout(180)  # eight `bothub` processes, each one measured by coverage under `make test`
async def test_chats_export_by_list_id_and_import_makes_it_active(tmp_path: Path, fake: FakeOpenAI) -> None:
    env = clean_env(OPENAI_BASE_URL=fake.base_url, OPENAI_API_KEY="test-key", BOTHUB_MODEL="fake-model")
    code, out, err = await bothub(tmp_path, "chat", stdin="first question\n/new\nsecond one\n/list\n", env=env)
    assert code == 0, err
    listed = [line for line in out.splitlines() if line.startswith("· `")]
    old_id = listed[0].split("`")[1]

    code, out, _ = await bothub(tmp_path, "chats")
    assert code == 0 and out.splitlines() == ["chat           conversations", "console:local  2"]

    code, jsonl, err = await bothub(tmp_path, "export", f"`{old_id}`")  # pasted from /list, backticks and all
    assert code == 0, err
    assert json.loads(jsonl.splitlines()[1])["content"] == "first question"
    code, _, err = await bothub(tmp_path, "export", old_id[:5], "--chat", "local")  # unique prefix, short key
    assert code == 0, err

    code, _, err = await bothub(tmp_path, "export", old_id, "--chat", "telegram:42")
    assert code == 1 and "no chat 'telegram:42'; chats: console:local" in err
    code, _, err = await bothub(tmp_path, "export", "ffffffff")
    assert code == 1 and "no conversation in chat console:local; its conversations:" in err and old_id in err

    (tmp_path / "conv.jsonl").write_text(jsonl, encoding="utf-8")
    code, said, err = await bothub(tmp_path, "import", "conv.jsonl", "--chat", "console:other")
    assert code == 0 and "it is now the chat's active conversation" in said, err
    code, out, _ = await bothub(tmp_path, "chat", "--chat", "other", stdin="/status\n", env=env)
    new_id = said.split("conversation ")[1].split()[0]
    assert f"Conversation `{new_id}`" in out


async def test_help_and_command_lines_speak_chinese(tmp_path: Path) -> None:
    """Item 11: the CLI's help and its own lines through bot/i18n with BOTHUB_LANGUAGE=zh."""
    code, out, _ = await bothub(tmp_path, "--help", env=clean_env(BOTHUB_LANGUAGE="zh"))
    assert code == 0 and "启动服务：所有已配置的平台" in out and "Web 服务器端口" in out
    code, _, err = await bothub(tmp_path, "chats", env=clean_env(BOTHUB_LANGUAGE="zh"))
    assert code == 1 and "还没有数据库" in err
