"""Friction 2 and 5: a taken port, --port/BOTHUB_PORT/--host, and `run` with no platform and no terminal."""

from __future__ import annotations

import asyncio
import os
import signal
import socket
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import aiohttp

from tests.fakes.openai_api import FakeOpenAI


def bothub_env(llm: FakeOpenAI, **extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("BOTHUB_", "OPENAI_", "TELEGRAM_", "DISCORD_",
                                                                     "FEISHU_", "SLACK_"))}
    return env | {"OPENAI_BASE_URL": llm.base_url, "OPENAI_API_KEY": "test-key", "BOTHUB_MODEL": "fake-model",
                  **extra}


@contextmanager
def taken_port() -> Iterator[int]:
    """A port some other program listens on."""
    with socket.socket() as other:
        other.bind(("127.0.0.1", 0))
        other.listen()
        yield other.getsockname()[1]


async def start(tmp_path: Path, env: dict[str, str], *args: str,
                stdin: int = asyncio.subprocess.DEVNULL) -> asyncio.subprocess.Process:
    return await asyncio.create_subprocess_exec(
        sys.executable, "-m", "bot", "--data-dir", str(tmp_path / "data"), *args, cwd=tmp_path, env=env,
        stdin=stdin, stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE)


async def line_with(proc: asyncio.subprocess.Process, text: str) -> str:
    assert proc.stderr is not None
    seen = []
    while line := (await asyncio.wait_for(proc.stderr.readline(), 30)).decode():
        seen.append(line)
        if text in line:
            return line
    raise AssertionError(f"{text!r} never said; stderr: {''.join(seen)}")


async def test_a_taken_port_is_one_line_naming_both_ways_to_change_it(tmp_path: Path, fake: FakeOpenAI) -> None:
    with taken_port() as port:
        proc = await start(tmp_path, bothub_env(fake, BOTHUB_PORT=str(port)), "run")
        _, err = await asyncio.wait_for(proc.communicate(), 30)
    said = err.decode().strip()
    assert proc.returncode == 2
    assert said == (f"bothub: the web server cannot listen on 127.0.0.1:{port} (in use): start with --port N (or "
                    "set BOTHUB_PORT=N; 0 picks a free one), or stop what uses it")


async def test_the_console_chat_starts_without_the_web_server_when_its_port_is_taken(tmp_path: Path,
                                                                                     fake: FakeOpenAI) -> None:
    with taken_port() as port:
        proc = await start(tmp_path, bothub_env(fake), "run", "--port", str(port), stdin=asyncio.subprocess.PIPE)
        out, err = await asyncio.wait_for(proc.communicate(b"hello past the busy port\n"), 30)
    assert proc.returncode == 0, err
    assert "hello past the busy port" in out.decode()  # the fake model echoes: the chat answered
    assert f"127.0.0.1:{port} (in use)" in err.decode() and "console chat starts without the dashboard" in err.decode()


async def test_headless_run_serves_the_web_chat_on_the_port_asked_for(tmp_path: Path, fake: FakeOpenAI) -> None:
    """stdin is /dev/null, as under nohup, Docker or systemd: `run` keeps serving and says where."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    proc = await start(tmp_path, bothub_env(fake, BOTHUB_PORT="1"), "run", "--port", str(port), "--host", "127.0.0.1")
    try:
        where = await line_with(proc, "serving the web chat")
        assert f"http://127.0.0.1:{port}/webchat" in where
        async with aiohttp.ClientSession() as http, http.get(f"http://127.0.0.1:{port}/webchat") as page:
            assert page.status == 200 and "<html" in (await page.text()).lower()
        await asyncio.sleep(0.5)
        assert proc.returncode is None  # still serving: not the old silent exit 0
    finally:
        proc.send_signal(signal.SIGTERM)
        await asyncio.wait_for(proc.communicate(), 30)
    assert proc.returncode == 0


async def test_a_bad_bothub_port_is_refused_clearly(tmp_path: Path, fake: FakeOpenAI) -> None:
    proc = await start(tmp_path, bothub_env(fake, BOTHUB_PORT="80a"), "run")
    _, err = await asyncio.wait_for(proc.communicate(), 30)
    assert proc.returncode == 2
    assert "BOTHUB_PORT must be a port number from 0 to 65535, not '80a'" in err.decode()
