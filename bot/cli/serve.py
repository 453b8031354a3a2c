"""`bothub run` and `bothub chat`: which adapters serve, the web server's port, and waiting until the end.

Which local chats `run` opens when no platform is configured: the console when there is a terminal (or a piped
script) to read, and the web chat when the web server and dashboard are on. With no terminal at all (nohup,
Docker, systemd: stdin is /dev/null or closed) only the web chat serves, until SIGTERM. A port already taken is
one line naming `--port` and BOTHUB_PORT; in the terminal's console chat it only turns the web server off, since
the person asked for a chat, and a service (a platform, or no terminal) stops instead: half of it would not run.
"""

from __future__ import annotations

import asyncio
import contextlib
import errno
import os
import signal
import socket
import stat
import sys
from typing import Any, Protocol, runtime_checkable

from bot.app import App
from bot.config import Config, ConfigError
from bot.i18n import t
from bot.store.schema import SchemaTooNew

CONSOLE = "console"  # the local terminal chat: `bothub chat`, and `run` when no platform is configured
WEB_CHAT = "web"  # the browser chat beside the dashboard, also started by `run` when no platform is configured


@runtime_checkable
class Interactive(Protocol):
    """An adapter whose input can end (the terminal at EOF): serving stops when it does."""

    async def wait_closed(self) -> None: ...


def headless() -> bool:
    """No terminal and no script on stdin: it is closed, or the null device (nohup, Docker, systemd)."""
    try:
        mode = os.fstat(sys.stdin.fileno()).st_mode if sys.stdin is not None else None
    except (OSError, ValueError):
        return True
    return mode is None or (stat.S_ISCHR(mode) and not sys.stdin.isatty())


def port_problem(host: str, port: int) -> str | None:
    """Why the web server could not listen on host:port (taken, not allowed), or None. Port 0 always works."""
    if port == 0:
        return None
    try:
        infos = socket.getaddrinfo(host or None, port, type=socket.SOCK_STREAM, flags=socket.AI_PASSIVE)
    except socket.gaierror as e:
        return f"{host}: {e.strerror}"
    for family, kind, proto, _, address in infos:
        with socket.socket(family, kind, proto) as probe:
            probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)  # as aiohttp binds
            try:
                probe.bind(address)
            except OSError as e:
                return _bind_error(e)
    return None


def _bind_error(e: OSError) -> str:
    return "in use" if e.errno == errno.EADDRINUSE else (e.strerror or str(e))


def port_hint(cfg: Config, why: str) -> str:
    return t(cfg.language, "cli_port_busy", host=cfg.server.host, port=cfg.server.port, why=why)


def local_chats(cfg: Config, terminal: bool) -> list[str]:
    """The adapters `run` opens when no platform is configured (and `chat`, which asks for the console)."""
    web = [WEB_CHAT] if cfg.server.enabled and cfg.server.dashboard else []
    return [CONSOLE, *web] if terminal else web


def prepare(cfg: Config, platforms: list[str], env: dict[str, str], terminal: bool) -> list[str] | str:
    """The adapters to load, after settling the web server's port and the dashboard's exposure; or the one
    line that explains why nothing can start."""
    lang = cfg.language
    if cfg.server.enabled and (why := port_problem(cfg.server.host, cfg.server.port)):
        if platforms or not terminal:
            return port_hint(cfg, why)
        cfg.server.enabled = False
        print(t(lang, "cli_port_busy_console", line=port_hint(cfg, why)), file=sys.stderr)
    names = platforms or local_chats(cfg, terminal)
    if not names and not cfg.server.enabled:
        return t(lang, "cli_nothing_to_serve")
    return names


async def serve(cfg: Config, names: list[str], env: dict[str, str], web_only: bool, trace: bool = False,
                guest: bool = False) -> int:
    """Start the adapters and the web server; stop on SIGTERM/SIGINT, or when the console's input ends. `guest`:
    `bothub chat`, which on the replicas' database takes only its own chats."""
    try:
        app = App(cfg, env, platforms=names, echo_traces=trace, guest=guest)
        console = next((a for a in app.adapters if isinstance(a, Interactive)), None)
    except ConfigError as e:
        print(f"bothub: {e}", file=sys.stderr)
        return 2
    stop, exit_code = asyncio.Event(), 0
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGTERM, signal.SIGINT):
        with contextlib.suppress(NotImplementedError):
            loop.add_signal_handler(sig, stop.set)
    try:
        await app.start()
        _say_where(app, cfg, web_only)
        waiters: list[asyncio.Future[Any]] = [asyncio.ensure_future(stop.wait())]
        if console is not None:
            waiters.append(asyncio.ensure_future(console.wait_closed()))
        await asyncio.wait(waiters, return_when=asyncio.FIRST_COMPLETED)
        for w in waiters:
            w.cancel()
        if console is not None and not stop.is_set():
            await app.hub.idle()  # end of piped input: answer everything first
            if failed := app.metrics.failed_answers():  # a script must know that answers are missing
                print(t(cfg.language, "cli_answers_failed", count=failed), file=sys.stderr)
                exit_code = 1
    except OSError as e:  # the port was taken between the check and the start
        print(f"bothub: {port_hint(cfg, _bind_error(e))}" if e.errno == errno.EADDRINUSE else f"bothub: {e}",
              file=sys.stderr)
        return 2
    except ConfigError as e:  # a platform refused the credentials at start
        print(f"bothub: {e}", file=sys.stderr)
        return 2
    except SchemaTooNew as e:  # a rolling upgrade: this replica is of the older release
        print(t(cfg.language, "cli_schema_newer", found=e.found, known=e.known), file=sys.stderr)
        return 2
    finally:
        await app.stop()
    return exit_code


def _say_where(app: App, cfg: Config, web_only: bool) -> None:
    """One line for where the browser goes; without a terminal, also that the web chat is all that runs."""
    if app.web_port is None:
        return
    base = f"http://{url_host(cfg.server.host)}:{app.web_port}"
    if cfg.server.dashboard:
        with_chat = WEB_CHAT in (a.name for a in app.adapters)
        print(t(cfg.language, "cli_dashboard_chat_at" if with_chat else "cli_dashboard_at", base=base),
              file=sys.stderr)
        if (link := app.sign_in_path()) is not None:  # one use; it leads to the web chat when there is one
            print(t(cfg.language, "cli_sign_in_link", link=f"{base}{link}{'&next=/webchat' if with_chat else ''}"),
                  file=sys.stderr)
    if web_only:
        key = "cli_headless_web" if cfg.server.dashboard else "cli_headless_health"
        print(t(cfg.language, key, base=base), file=sys.stderr)


def url_host(host: str) -> str:
    if host in ("0.0.0.0", "::", ""):
        return "127.0.0.1"
    return f"[{host}]" if ":" in host else host
