"""Issue 29 §8: `bothub onboard`, typed into in a real pseudo-terminal, against the fake OpenAI server.

A good endpoint writes .env (0600) and bothub.yaml that the config loader takes, then the chat starts with them;
a refused key or an unreachable URL is said and asked again with nothing written; zh speaks Chinese; an
existing .env stays unless the user says yes; piped stdin is refused in one line."""

from __future__ import annotations

import asyncio
import fcntl
import os
import pty
import struct
import subprocess
import sys
import termios
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path

from bot.cli import envfile
from bot.config import load_config
from tests.e2e.test_console_terminal import Screen
from tests.fakes.openai_api import API_KEY, MODEL, FakeOpenAI
from tests.harness import answer_requests, wait_for

SEEN: dict[int, int] = {}  # per screen: where the last awaited text ended
UNREACHABLE = "http://127.0.0.1:9/v1"  # the discard port: nothing listens there


@asynccontextmanager
async def onboarding(cwd: Path, **extra: str) -> AsyncIterator[tuple[Screen, asyncio.subprocess.Process]]:
    """`bothub onboard` in a pty in `cwd`, with no model settings inherited."""
    master, slave = pty.openpty()
    fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", 24, 120, 0, 0))
    env = {name: value for name, value in os.environ.items()
           if not name.startswith(("OPENAI_", "BOTHUB_", "TELEGRAM_", "DISCORD_", "FEISHU_", "DINGTALK_", "SLACK_",
                                   "WECOM_"))}
    env.update({"TERM": "xterm", "PROMPT_TOOLKIT_NO_CPR": "1", "BOTHUB_PORT": "0", "BOTHUB_LANGUAGE": "en", **extra})
    proc = await asyncio.create_subprocess_exec(sys.executable, "-m", "bot", "onboard", stdin=slave, stdout=slave,
                                                stderr=slave, env=env, cwd=cwd)
    os.close(slave)
    screen = Screen(master)
    try:
        yield screen, proc
    finally:
        if proc.returncode is None:
            proc.kill()
        await proc.wait()
        screen.close()


async def answer(screen: Screen, question: str, reply: str) -> None:
    """Waits for `question` asked after the last answer (a retry asks the same words again), then types."""
    await shows_next(screen, question)
    screen.type(reply + "\r")


async def shows_next(screen: Screen, text: str) -> None:
    start = SEEN.get(id(screen), 0)
    try:
        await wait_for(lambda: text.encode() in screen.out[start:], within=20)
    except AssertionError:
        raise AssertionError(f"{text!r} not shown; screen: {bytes(screen.out[start:])[-3000:]!r}") from None
    SEEN[id(screen)] = screen.out.index(text.encode(), start) + len(text.encode())


async def pick_endpoint(screen: Screen, url: str, key: str) -> None:
    """Choice 4, any OpenAI-compatible URL."""
    await answer(screen, "Which model endpoint?", "4")
    await answer(screen, "Base URL", url)
    await answer(screen, "Model name", MODEL)
    await answer(screen, "API key", key)


async def test_a_good_endpoint_writes_both_files_and_the_chat_starts_with_them(tmp_path: Path,
                                                                                fake: FakeOpenAI) -> None:
    (tmp_path / ".env").write_text("OPENAI_API_KEY=an-old-key\n", encoding="utf-8")
    async with onboarding(tmp_path) as (screen, proc):
        await answer(screen, ".env already exist(s). Replace?", "y")
        await pick_endpoint(screen, fake.base_url, API_KEY)
        await shows_next(screen, "the model answered")
        await answer(screen, "DINGTALK_CLIENT_ID", "")
        await answer(screen, "DISCORD_BOT_TOKEN", "")
        await answer(screen, "FEISHU_APP_ID", "")
        await answer(screen, "SLACK_BOT_TOKEN", "")
        await answer(screen, "TELEGRAM_BOT_TOKEN", "123:secret-token")
        await answer(screen, "WECOM_BOT_ID", "")
        await answer(screen, "Start the chat now?", "y")
        await shows_next(screen, "you>")  # the chat, started with the new .env (the old key would be refused)
        screen.type("hello after onboarding\r")
        await wait_for(lambda: len(answer_requests(fake)) == 2, within=20)  # the check's turn, then ours
        await shows_next(screen, "hello after onboarding")
        screen.type("\x04")
        assert await asyncio.wait_for(proc.wait(), 30) == 0
    assert b"123:secret-token" not in screen.out and API_KEY.encode() not in screen.out  # typed hidden
    env_file = tmp_path / ".env"
    assert env_file.stat().st_mode & 0o777 == 0o600
    values = envfile.parse(env_file)
    assert values == {"OPENAI_BASE_URL": fake.base_url, "OPENAI_API_KEY": API_KEY, "BOTHUB_MODEL": MODEL,
                      "TELEGRAM_BOT_TOKEN": "123:secret-token"}
    cfg = load_config(tmp_path / "bothub.yaml", values)
    assert (cfg.llm.base_url, cfg.llm.api_key, cfg.llm.chat_model) == (fake.base_url, API_KEY, MODEL)
    assert cfg.server.enabled is True and cfg.enabled_platforms == ["telegram"]
    written = (tmp_path / "bothub.yaml").read_text(encoding="utf-8")
    assert "secret-token" not in written and API_KEY not in written


async def test_a_refused_key_and_an_unreachable_url_are_said_and_asked_again(tmp_path: Path,
                                                                             fake: FakeOpenAI) -> None:
    async with onboarding(tmp_path) as (screen, proc):
        await pick_endpoint(screen, fake.base_url, "wrong-key")
        await shows_next(screen, "the API key was refused")
        await shows_next(screen, "nothing was written; let's try again")
        assert not (tmp_path / ".env").exists() and not (tmp_path / "bothub.yaml").exists()
        await pick_endpoint(screen, UNREACHABLE, API_KEY)
        await shows_next(screen, f"LLM at {UNREACHABLE}: not reachable")
        await pick_endpoint(screen, fake.base_url, API_KEY)
        await shows_next(screen, "DINGTALK_CLIENT_ID")
        screen.type("\x03")  # Ctrl-C at the platforms: still nothing written
        await shows_next(screen, "stopped: nothing was written")
        assert await asyncio.wait_for(proc.wait(), 30) == 1
    assert not any(entry.name for entry in os.scandir(tmp_path))


async def test_zh_asks_in_chinese(tmp_path: Path, fake: FakeOpenAI) -> None:
    async with onboarding(tmp_path, BOTHUB_LANGUAGE="zh") as (screen, _proc):
        await answer(screen, "使用哪个模型端点？", "4")
        await answer(screen, "基础 URL", fake.base_url)
        await answer(screen, "模型名称", MODEL)
        await answer(screen, "API 密钥", "wrong-key")
        await shows_next(screen, "API 密钥被拒绝")
        await shows_next(screen, "没有写入任何内容；请重试")


async def test_an_existing_env_file_stays_without_a_yes(tmp_path: Path) -> None:
    (tmp_path / ".env").write_text("OPENAI_API_KEY=mine\n", encoding="utf-8")
    async with onboarding(tmp_path) as (screen, proc):
        await answer(screen, ".env already exist(s). Replace? [y/N]", "")
        await shows_next(screen, "kept the existing files")
        assert await asyncio.wait_for(proc.wait(), 30) == 1
    assert (tmp_path / ".env").read_text(encoding="utf-8") == "OPENAI_API_KEY=mine\n"
    assert not (tmp_path / "bothub.yaml").exists()


def test_without_a_terminal_it_refuses_in_one_line(tmp_path: Path) -> None:
    done = subprocess.run([sys.executable, "-m", "bot", "onboard"], stdin=subprocess.DEVNULL, capture_output=True,
                          text=True, cwd=tmp_path, timeout=60, env={**os.environ, "BOTHUB_LANGUAGE": "en"})
    assert done.returncode == 2
    assert done.stderr.strip().count("\n") == 0 and "needs a terminal" in done.stderr
    assert "OPENAI_API_KEY" in done.stderr and not list(tmp_path.iterdir())
