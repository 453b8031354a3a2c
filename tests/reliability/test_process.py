"""The real `python -m bot` process: kill -9 mid-answer, graceful SIGTERM, and the `pair` subcommand."""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
import sqlite3
import sys
import time
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
import yaml

from bot.store.sqlite import SqliteStore
from bot.tree.model import Conversation
from tests.fakes.openai_api import FakeOpenAI
from tests.fakes.telegram_api import FakeTelegram
from tests.harness import answer_requests, wait_for

REPO = Path(__file__).resolve().parents[2]
CHAT = "console:local"


def write_config(tmp_path: Path, **settings: Any) -> Path:
    path = tmp_path / "bothub.yaml"
    settings = {"server": {"port": 0}, **settings}  # another suite (or engineer) may hold 8080 on this machine
    path.write_text(yaml.safe_dump({"data_dir": str(tmp_path / "data"), **settings}), encoding="utf-8")
    path.chmod(0o600)
    return path


def child_env(llm: FakeOpenAI | None = None, **extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("BOTHUB_", "OPENAI_", "TELEGRAM_", "DISCORD_",
                                                                     "FEISHU_", "SLACK_"))}
    if llm is not None:
        env |= {"OPENAI_BASE_URL": llm.base_url, "OPENAI_API_KEY": "test-key", "BOTHUB_MODEL": "fake-model"}
    return env | extra


@dataclass
class Bot:
    proc: asyncio.subprocess.Process
    out: list[str] = field(default_factory=list)

    @property
    def stdout(self) -> str:
        return "".join(self.out)

    async def say(self, line: str) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.write(f"{line}\n".encode())
        await self.proc.stdin.drain()

    async def shows(self, text: str, within: float = 15.0) -> None:
        deadline = time.monotonic() + within
        while text not in self.stdout:
            assert self.proc.returncode is None, f"bot exited early: {self.stdout!r}"
            assert time.monotonic() < deadline, f"{text!r} not shown within {within}s; output: {self.stdout!r}"
            await asyncio.sleep(0.02)


@contextlib.asynccontextmanager
async def running_bot(config: Path, llm: FakeOpenAI, env: dict[str, str]) -> AsyncIterator[Bot]:
    """`python -m bot run` with the given platform environment."""
    proc = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "bot", "--config", str(config), "run", cwd=REPO, env=child_env(llm, **env),
        stdin=asyncio.subprocess.DEVNULL)
    try:
        yield Bot(proc)
    finally:
        if proc.returncode is None:
            proc.terminate()
            try:
                await asyncio.wait_for(proc.wait(), 15)
            except TimeoutError:
                proc.kill()
        await proc.wait()


@contextlib.asynccontextmanager
async def console_bot(config: Path, llm: FakeOpenAI) -> AsyncIterator[Bot]:
    """`python -m bot chat` with stdin kept open, so the process only ends when told to."""
    proc = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "bot", "--config", str(config), "chat", cwd=REPO, env=child_env(llm),
        stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.STDOUT)
    bot = Bot(proc)

    async def pump() -> None:
        assert proc.stdout is not None
        while chunk := await proc.stdout.read(4096):
            bot.out.append(chunk.decode(errors="replace"))

    reader = asyncio.create_task(pump())
    try:
        yield bot
    finally:
        if proc.returncode is None:
            proc.kill()
        await proc.wait()
        await reader


async def stored_conversation(data_dir: Path) -> Conversation:
    """Reopen the database as the next start would, and check the tree is whole."""
    store = SqliteStore(data_dir / "bothub.sqlite3")
    await store.open()
    try:
        [info] = await store.conversations.recent(CHAT)
        conv = await store.conversations.load(CHAT, info.id, "")  # raises on an orphan or a dangling cursor
    finally:
        await store.close()
    assert conv is not None
    for message in conv.messages.values():
        assert message.parent_id is None or message.parent_id in conv.messages, f"orphan {message.id}"
    assert conv.current_message_id in conv.messages
    assert info.message_count == len(conv.messages) - 1
    return conv


def words(prefix: str, n: int) -> str:
    return " ".join(f"{prefix}{i}" for i in range(1, n + 1))


async def test_kill_9_mid_answer_loses_nothing_stored(tmp_path: Path) -> None:
    llm = FakeOpenAI(words_delay=0.1)
    await llm.start()
    try:
        config = write_config(tmp_path)
        async with console_bot(config, llm) as bot:
            await bot.say("alpha beta")
            await bot.shows("alpha beta")
            await bot.say(words("w", 80))
            await bot.shows("w5 ")
            bot.proc.send_signal(signal.SIGKILL)
            await bot.proc.wait()
        conv = await stored_conversation(tmp_path / "data")
    finally:
        await llm.stop()
    contents = [(m.role, m.content) for m in conv.messages.values() if m.role != "system"]
    assert contents[:3] == [("user", "alpha beta"), ("assistant", "alpha beta"), ("user", words("w", 80))]
    assert conv.messages[conv.current_message_id].content in (words("w", 80), words("w", 80).rstrip())


async def test_kill_9_with_messages_queued_answers_them_all_after_the_restart(tmp_path: Path) -> None:
    """The durable inbox across a real crash (`bothub run`, Telegram): 0 lost, 0 answered twice, in order."""
    stuck, fast, tg = FakeOpenAI(first_token_delay=60.0), FakeOpenAI(), FakeTelegram()
    for server in (stuck, fast, tg):
        await server.start()
    questions = ["alpha1", "bravo2", "charlie3"]
    database = tmp_path / "data" / "bothub.sqlite3"
    try:
        config = write_config(tmp_path)
        env = tg.env
        async with running_bot(config, stuck, env) as bot:
            for question in questions:
                tg.inject_message(42, question)
            await wait_for(lambda: len(stuck.requests) == 1 and _inbox_size(database) == 3, within=30)
            bot.proc.send_signal(signal.SIGKILL)
            await bot.proc.wait()
        async with running_bot(config, fast, env):
            await wait_for(lambda: tg.bot_texts(42) == questions, within=90)  # a restart under a loaded machine is slow
            await asyncio.sleep(0.5)  # room for a wrong second answer to show
    finally:
        for server in (stuck, fast, tg):
            await server.stop()
    assert tg.bot_texts(42) == questions
    assert [r["body"]["messages"][-1]["content"] for r in answer_requests(fast)] == questions
    assert _inbox_size(database) == 0


def _inbox_size(database: Path) -> int:
    if not database.exists():
        return 0
    with contextlib.closing(sqlite3.connect(database)) as db:
        try:
            return int(db.execute("SELECT COUNT(*) FROM inbox").fetchone()[0])
        except sqlite3.OperationalError:  # not migrated yet
            return 0


async def test_sigterm_interrupts_a_long_run_after_the_grace_period(tmp_path: Path) -> None:
    llm = FakeOpenAI(words_delay=0.2)
    await llm.start()
    try:
        config = write_config(tmp_path, shutdown_grace=1.0)
        async with console_bot(config, llm) as bot:
            await bot.say(words("w", 100))  # 20 s to stream in full
            await bot.shows("w3 ")
            signalled = time.monotonic()
            bot.proc.send_signal(signal.SIGTERM)
            rc = await asyncio.wait_for(bot.proc.wait(), 10)
            took = time.monotonic() - signalled
        conv = await stored_conversation(tmp_path / "data")
    finally:
        await llm.stop()
    assert rc == 0 and took < 10
    assert took >= 0.9, "the run should get its grace period before being cancelled"
    assert "(interrupted)" in bot.stdout
    last = conv.messages[conv.current_message_id]
    assert last.role == "assistant" and last.interrupted and last.content.startswith("w1 w2 w3")
    assert not (tmp_path / "data" / "bothub.sqlite3-wal").exists(), "database was not closed cleanly"


async def test_sigterm_lets_a_short_run_finish(tmp_path: Path) -> None:
    llm = FakeOpenAI(words_delay=0.1)
    await llm.start()
    try:
        config = write_config(tmp_path, shutdown_grace=8.0)
        async with console_bot(config, llm) as bot:
            await bot.say(words("s", 15))
            await bot.shows("s2 ")
            bot.proc.send_signal(signal.SIGTERM)
            rc = await asyncio.wait_for(bot.proc.wait(), 10)
        conv = await stored_conversation(tmp_path / "data")
    finally:
        await llm.stop()
    assert rc == 0
    assert words("s", 15) in bot.stdout.replace("\n", " ") and "(interrupted)" not in bot.stdout
    last = conv.messages[conv.current_message_id]
    assert (last.role, last.content, last.interrupted) == ("assistant", words("s", 15), False)


def run_cli(*args: str, env: dict[str, str] | None = None, code: str | None = None) -> tuple[int, str]:
    import subprocess

    command = [sys.executable, "-c", code, *args] if code else [sys.executable, "-m", "bot", *args]
    done = subprocess.run(command, cwd=REPO, env=env or child_env(), capture_output=True, text=True, timeout=30)
    return done.returncode, done.stdout + done.stderr


@pytest.mark.parametrize("mode, warned", [(0o644, True), (0o600, False)])
def test_readable_config_with_a_secret_is_warned_about(tmp_path: Path, mode: int, warned: bool) -> None:
    secret = "sk-" + "A1b2C3d4" * 4
    config = write_config(tmp_path, llm={"api_key": secret})
    config.chmod(mode)
    rc, output = run_cli("--config", str(config), "pair", "approve", "NOSUCHCODE", "--platform", "telegram")
    assert rc == 1 and "no pending telegram pairing" in output
    assert ("readable by other users" in output) is warned
    assert secret not in output


def test_cli_installs_the_redaction_filter(tmp_path: Path) -> None:
    """Whatever logs a token after `main` set up logging, the token never reaches the output."""
    token = "123456789:" + "AAHdqTcvCH1vGWJxfSeofSAs0K5PALDsaw"
    config = write_config(tmp_path)
    code = ("import logging, sys; from bot.cli import main; main.main(sys.argv[1:]); "
            "logging.getLogger('telegram.ext').error('GET https://api.telegram.org/bot%s/getMe failed', "
            f"{token!r})")  # a literal: main has dropped the token from os.environ
    rc, output = run_cli("--config", str(config), "init", str(tmp_path / "ws"),
                         env=child_env(TELEGRAM_BOT_TOKEN=token), code=code)
    assert rc == 0, output
    assert "getMe failed" in output and token not in output and "AAHdqTcv" not in output
