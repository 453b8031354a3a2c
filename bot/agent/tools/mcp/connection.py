"""One MCP server's connection: started on first use, restarted after a crash with backoff, stopped with the hub.

The SDK's transports are anyio context managers that must be entered and left by the same task, so each
connection lives in its own owner task; callers in other tasks only use the session it publishes. The
server's messages are relayed so that their end (a crash) is noticed at once, not at the next call.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import re
import time
from collections.abc import AsyncIterator, Mapping
from pathlib import Path
from typing import Any, TextIO

import anyio
import httpx2
import mcp_types as types
from anyio.streams.memory import MemoryObjectSendStream
from mcp import ClientSession, StdioServerParameters, stdio_client
from mcp.client.streamable_http import streamable_http_client
from mcp.shared.message import SessionMessage

from bot.agent.tools.mcp.errors import McpUnavailable
from bot.toolconfig import McpServerConfig

log = logging.getLogger("bothub.mcp")

BACKOFF_FIRST, BACKOFF_MAX = 1.0, 60.0  # seconds before a failed server may start again, doubling
STOP_GRACE = 5.0  # seconds a server gets to shut down before its owner task is cancelled
_START_MARK = "--- bothub started this server at"
_ENV_REF = re.compile(r"\$\{([A-Za-z_][A-Za-z0-9_]*)\}")


def expand_env(value: str, env: Mapping[str, str]) -> str:
    """`${NAME}` from the hub's environment, so tokens stay out of the YAML file."""

    def lookup(match: re.Match[str]) -> str:
        if match.group(1) not in env:
            raise McpUnavailable(f"environment variable {match.group(1)} is not set")
        return env[match.group(1)]

    return _ENV_REF.sub(lookup, value)


class McpConnection:
    def __init__(self, name: str, cfg: McpServerConfig, env: Mapping[str, str], log_dir: Path) -> None:
        self.name = name
        self.cfg = cfg
        self.env = env
        self.log_dir = log_dir
        self.tools: list[types.Tool] | None = None  # the last listing; None until a start succeeds
        self.error: str | None = None  # why the last start failed or the last run ended
        self.failures = 0  # in a row; reset by a successful call
        self._session: ClientSession | None = None
        self._task: asyncio.Task[None] | None = None
        self._ready = asyncio.Event()
        self._stop = asyncio.Event()
        self._broken = asyncio.Event()
        self._lock = asyncio.Lock()
        self._next_start = 0.0
        self._http_refusal = ""  # the last HTTP error status, which the SDK does not report

    @property
    def running(self) -> bool:
        return self._session is not None

    def backoff_left(self) -> float:
        return max(0.0, self._next_start - time.monotonic())

    async def session(self) -> ClientSession:
        """The live session, starting the server if it is not running and no backoff is pending."""
        async with self._lock:
            if self._session is not None:
                return self._session
            if self._stop.is_set():
                raise McpUnavailable("the hub is shutting down")
            if left := self.backoff_left():
                raise McpUnavailable(f"it failed ({self.error}); the next start is allowed in {left:.1f} s")
            self._ready.clear()
            self._broken.clear()
            self._http_refusal = ""
            self._task = asyncio.create_task(self._own(), name=f"mcp-{self.name}")
            try:
                async with asyncio.timeout(self.cfg.start_timeout):
                    await self._ready.wait()
            except TimeoutError:
                self.error = f"it did not start within {self.cfg.start_timeout:g} s"
                self._task.cancel()
                await asyncio.wait([self._task])
            if self._session is None:
                raise McpUnavailable(self.error or "it stopped")
            return self._session

    def mark_broken(self, reason: str) -> None:
        """The connection is dead: the owner task cleans up and the next use starts the server again."""
        self.error = reason
        self._broken.set()

    async def close_broken(self, reason: str) -> None:
        """`mark_broken`, then wait until the owner task has cleaned up (so its backoff is in place)."""
        self.mark_broken(reason)
        if self._task is not None:
            await asyncio.wait([self._task], timeout=STOP_GRACE)

    def succeeded(self) -> None:
        self.failures = 0

    async def stop(self) -> None:
        self._stop.set()
        if self._task is not None and not self._task.done():
            _, pending = await asyncio.wait([self._task], timeout=STOP_GRACE)
            for task in pending:
                task.cancel()
                await asyncio.wait([task])

    async def _own(self) -> None:
        """Owner task: connect, publish the session, wait for stop or breakage, then clean up."""
        try:
            async with contextlib.AsyncExitStack() as stack:
                read, write = await stack.enter_async_context(self._transport())
                relay_send, relay_read = anyio.create_memory_object_stream[SessionMessage | Exception](0)
                group = await stack.enter_async_context(anyio.create_task_group())
                group.start_soon(self._relay, read, relay_send)
                session = await stack.enter_async_context(ClientSession(relay_read, write))
                await session.initialize()
                self.tools = await _list_tools(session)
                self._session, self.error = session, None
                self._ready.set()
                log.info("MCP server %s started with %d tools", self.name, len(self.tools))
                await _first_of(self._stop, self._broken)
                self._session = None
                group.cancel_scope.cancel()
        except Exception as e:  # the server's fault, never the hub's: reported and retried later
            starting = not self._ready.is_set()
            self.error = _describe(e, self.cfg.command) if starting or not self.error else self.error
            if starting:  # what the server itself said helps most
                said = await asyncio.to_thread(_stderr_tail, self.log_dir, self.name) if self.cfg.command else ""
                self.error += f" (stderr: {said})" if said else f" ({self._http_refusal})" if self._http_refusal else ""
        finally:
            self._session = None
            if not self._stop.is_set():
                self.failures += 1
                delay = min(BACKOFF_MAX, BACKOFF_FIRST * 2 ** (self.failures - 1))
                self._next_start = time.monotonic() + delay
                log.warning("MCP server %s stopped: %s; next start allowed in %.0f s", self.name, self.error, delay)
            self._ready.set()

    async def _relay(self, read: Any, out: MemoryObjectSendStream[SessionMessage | Exception]) -> None:
        """Pass messages on; the stream's end means the server is gone (the last transport error says why)."""
        why = "the server closed the connection (it crashed or exited)"
        async with out:
            async for item in read:
                if isinstance(item, Exception):
                    why = _describe(item)
                await out.send(item)
        if not self._stop.is_set():
            self.mark_broken(why)

    @contextlib.asynccontextmanager
    async def _transport(self) -> AsyncIterator[Any]:
        cfg = self.cfg
        if cfg.url:
            headers = {k: expand_env(v, self.env) for k, v in cfg.headers.items()}

            async def note_refusal(response: httpx2.Response) -> None:  # the SDK keeps only "an error response"
                if response.status_code >= 400:
                    self._http_refusal = f"HTTP {response.status_code}"

            async with (httpx2.AsyncClient(headers=headers, timeout=httpx2.Timeout(30.0, read=300.0),
                                           event_hooks={"response": [note_refusal]}) as client,
                        streamable_http_client(expand_env(cfg.url, self.env), http_client=client) as streams):
                yield streams
            return
        assert cfg.command is not None  # the config holds exactly one of url and command
        params = StdioServerParameters(command=cfg.command, args=cfg.args,
                                       env={k: expand_env(v, self.env) for k, v in cfg.env.items()},
                                       cwd=str(cfg.cwd) if cfg.cwd else None)
        errlog = await asyncio.to_thread(_open_log, self.log_dir, self.name)
        try:
            async with stdio_client(params, errlog=errlog) as streams:
                yield streams
        finally:
            errlog.close()


async def _first_of(*events: asyncio.Event) -> None:
    waiters = [asyncio.ensure_future(e.wait()) for e in events]
    try:
        await asyncio.wait(waiters, return_when=asyncio.FIRST_COMPLETED)
    finally:
        for waiter in waiters:
            waiter.cancel()


async def _list_tools(session: ClientSession) -> list[types.Tool]:
    tools: list[types.Tool] = []
    cursor: str | None = None
    while True:
        page = await session.list_tools(params=types.PaginatedRequestParams(cursor=cursor) if cursor else None)
        tools += page.tools
        cursor = page.next_cursor
        if not cursor:
            return tools


def _log_path(log_dir: Path, name: str) -> Path:
    return log_dir / f"{name}.stderr.log"


def _open_log(log_dir: Path, name: str) -> TextIO:
    """The server's stderr goes to its own file: there when it crashes, never mixed into the hub's log."""
    log_dir.mkdir(parents=True, exist_ok=True)
    errlog = open(_log_path(log_dir, name), "a", encoding="utf-8")  # noqa: SIM115 - closed by _transport
    errlog.write(f"{_START_MARK} {time.strftime('%Y-%m-%d %H:%M:%S')}\n")
    errlog.flush()
    return errlog


def _stderr_tail(log_dir: Path, name: str) -> str:
    """The last line the server wrote to stderr since it was last started, shortened."""
    try:
        with open(_log_path(log_dir, name), "rb") as f:
            f.seek(max(0, f.seek(0, 2) - 2048))
            lines = f.read().decode("utf-8", "replace").strip().splitlines()
    except OSError:
        return ""
    return "" if not lines or lines[-1].startswith(_START_MARK) else lines[-1][:200]


def _describe(error: BaseException, command: str | None = None) -> str:
    """One line for /mcp and the log; a missing program is named (uvloop's spawn error does not carry it)."""
    while isinstance(error, BaseExceptionGroup) and len(error.exceptions) == 1:
        error = error.exceptions[0]
    if isinstance(error, FileNotFoundError):
        return f"command not found: {error.filename or command or error}"
    text = str(error) or type(error).__name__
    return text if len(text) <= 200 else text[:197] + "…"
