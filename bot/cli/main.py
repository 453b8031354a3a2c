"""`bothub run | chat | init | doctor | chats | export | import | pair`, plus the commands adapters contribute."""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import logging
import os
import signal
import sys
from collections.abc import Sequence
from importlib import metadata
from pathlib import Path
from typing import Any, Protocol, runtime_checkable

from bot.adapter import AdapterSpec, CliCommand, installed_specs
from bot.app import App
from bot.cli import envfile
from bot.commands import menu
from bot.config import Config, ConfigError, llm_setup_hint, load_config, shell_admins_problem
from bot.ops import eventloop, redact, tracelog

log = logging.getLogger("bothub")
CONSOLE_CHAT = "console:local"
CONSOLE = "console"  # the local terminal chat: `bothub chat`, and `run` when no platform is configured
WEB_CHAT = "web"  # the browser chat beside the dashboard, also started by `run` when no platform is configured
QUIET_LOGGERS = ("httpx", "httpx2", "httpcore")


@runtime_checkable
class Interactive(Protocol):
    """An adapter whose input can end (the terminal at EOF): serving stops when it does."""

    async def wait_closed(self) -> None: ...


def build_parser(specs: Sequence[AdapterSpec[Any]] = ()) -> argparse.ArgumentParser:
    """The global options are accepted before and after the subcommand (`bothub chat --data-dir D`)."""
    common = argparse.ArgumentParser(add_help=False)
    common.add_argument("--config", type=Path, default=argparse.SUPPRESS, metavar="FILE",
                        help="YAML config file (default: ./bothub.yaml or $BOTHUB_CONFIG)")
    common.add_argument("--data-dir", type=Path, default=argparse.SUPPRESS, metavar="DIR",
                        help="where the database, chat folders and workspace live (default: ./data or "
                             "$BOTHUB_DATA_DIR)")
    parser = argparse.ArgumentParser(prog="bothub", parents=[common],
                                     description="One LLM agent in your chats. Without a command: `run`.",
                                     epilog="A .env file in the working directory is read first; variables "
                                            "already set in the environment win.")
    parser.add_argument("--version", action="version", version=f"bothub {_version()}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")

    def add(name: str, text: str) -> argparse.ArgumentParser:
        return sub.add_parser(name, parents=[common], help=text, description=text)

    add("run", "start the hub: every configured platform, or the console chat when none is")
    chat = add("chat", "chat in this terminal; piped stdin is a script, one message or command per line")
    chat.add_argument("--chat", default="local", metavar="NAME", help="local chat name; each keeps its own "
                      "history (default: local)")
    init = add("init", "create a workspace with the default files (never overwrites yours)")
    init.add_argument("path", nargs="?", type=Path, help="workspace folder (default: <data dir>/workspace)")
    add("doctor", "check workspace, config, LLM endpoint and platform credentials")
    add("chats", "list the chats in the database with their keys and conversation counts")
    export = add("export", "print a conversation as JSONL (seed 000 format)")
    export.add_argument("conversation_id", metavar="ID", help="conversation id as /list shows it (a unique "
                        "prefix is enough)")
    export.add_argument("--chat", default=CONSOLE_CHAT, metavar="KEY",
                        help=f"the chat that owns it, as `bothub chats` shows it (default: {CONSOLE_CHAT})")
    imp = add("import", "import a JSONL conversation into a chat and make it the active one")
    imp.add_argument("file", type=Path, help="a file written by `bothub export`")
    imp.add_argument("--chat", default=CONSOLE_CHAT, metavar="KEY",
                     help=f"the chat to import into (default: {CONSOLE_CHAT})")
    migrate = add("migrate-store", "copy a SQLite store into an empty PostgreSQL database and check the counts")
    migrate.add_argument("--from", dest="source", metavar="URL",
                         help="sqlite:///path (default: this config's database)")
    migrate.add_argument("--to", dest="target", required=True, metavar="URL", help="postgresql://user@host/db")
    token = add("api-token", "create, list or revoke HTTP API tokens (a new token is printed once, then only "
                "its digest is kept)")
    token.add_argument("action", choices=["create", "list", "revoke"], help="what to do")
    token.add_argument("value", nargs="?", default="", metavar="NAME|ID",
                       help="create: a name for the system that will use it; revoke: the token's id")
    add("set-password", "set the dashboard's admin password (kept as a scrypt hash in the data dir)")
    pair = add("pair", "approve a DM pairing code (dm_policy: pairing)")
    pair.add_argument("action", choices=["approve"], help="what to do with the code")
    pair.add_argument("code", help="the code the bot gave the person")
    pair.add_argument("--platform", required=True, choices=[s.name for s in specs if s.config_model().access],
                      help="where the person wrote from")
    for spec in specs:
        for extra in spec.commands:
            extra.arguments(add(extra.name, extra.help))
            sub.choices[extra.name].set_defaults(adapter_command=(spec, extra))
    return parser


def _version() -> str:
    try:
        return metadata.version("bothub")
    except metadata.PackageNotFoundError:
        return "unknown"


def main(argv: list[str] | None = None) -> int:
    os.umask(0o077)  # the database, chat folders and exports are the owner's alone
    envfile.load(Path(".env"), os.environ)
    specs = installed_specs()
    args = build_parser(specs).parse_args(argv)
    config_arg: Path | None = getattr(args, "config", None)
    data_dir: Path | None = getattr(args, "data_dir", None)

    try:
        cfg = load_config(config_arg)
    except ConfigError as e:
        print(f"bothub: {e}", file=sys.stderr)
        return 2
    if data_dir:
        cfg.data_dir = data_dir
    command = args.command or "run"
    console_only = command == "chat" or (command == "run" and not cfg.enabled_platforms)
    level = cfg.log_level
    if console_only and "BOTHUB_LOG_LEVEL" not in os.environ and level == "INFO":
        level = "WARNING"  # the terminal is the chat: only problems go to stderr
    logging.basicConfig(level=level, format=tracelog.LOG_FORMAT)
    tracelog.install()  # every line logged during an agent run names its trace
    env = dict(os.environ)  # the secrets stay here, handed to what needs them, and leave the process environment
    redact.install(env)  # tokens and keys never reach the log, whoever logs them (names from the specs)
    redact.route_library_loggers()
    redact.scrub_environment(os.environ)
    config_path = config_arg or Path(env.get("BOTHUB_CONFIG") or "bothub.yaml")
    if warning := redact.readable_secrets_warning(config_path):
        log.warning("%s", warning)
    for noisy in QUIET_LOGGERS + tuple(name for spec in specs for name in spec.loggers):
        logging.getLogger(noisy).setLevel(max(logging.WARNING, logging.getLogger().level))
    if (contributed := getattr(args, "adapter_command", None)) is not None:
        spec, extra = contributed
        return eventloop.run(_adapter_command(cfg, spec, extra, args, env))
    if command in ("run", "chat"):
        if not (cfg.llm.api_key or cfg.llm.base_url):
            print(llm_setup_hint(), file=sys.stderr)
            return 2
        platforms = cfg.enabled_platforms if command == "run" else []
        if problem := shell_admins_problem(cfg, platforms):
            print(f"bothub: {problem}", file=sys.stderr)
            return 2
        if cfg.server.enabled is None:
            cfg.server.enabled = command == "run"  # the dashboard comes with the hub, not with `bothub chat`
        chat_name = getattr(args, "chat", "local")
        return eventloop.run(_serve(cfg, platforms, chat_name, env))
    return eventloop.run(_tool(cfg, command, args, env))


async def _serve(cfg: Config, platforms: list[str], chat_name: str, environ: dict[str, str]) -> int:
    env = {**environ, "BOTHUB_CONSOLE_CHAT": chat_name}
    console: Interactive | None = None
    try:
        app = App(cfg, env)
        local = [CONSOLE, WEB_CHAT] if cfg.server.enabled and cfg.server.dashboard else [CONSOLE]
        for name in platforms or local:
            adapter = app.load_adapter(name)
            if isinstance(adapter, Interactive):
                console = adapter
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
        if app.web_port is not None and cfg.server.dashboard:
            base = f"http://{_url_host(cfg.server.host)}:{app.web_port}"
            has_chat = WEB_CHAT in (a.name for a in app.adapters)
            chat = f", web chat at {base}/webchat" if has_chat else ""
            print(f"dashboard: open {base}/{chat}", file=sys.stderr)
            if (link := app.sign_in_path()) is not None:  # one use; it leads to the web chat when there is one
                print(f"dashboard: no admin password is set; sign in once with {base}{link}"
                      f"{'&next=/webchat' if has_chat else ''} (or run `bothub set-password`)", file=sys.stderr)
        waiters: list[asyncio.Future[Any]] = [asyncio.ensure_future(stop.wait())]
        if console is not None:
            waiters.append(asyncio.ensure_future(console.wait_closed()))
        await asyncio.wait(waiters, return_when=asyncio.FIRST_COMPLETED)
        for w in waiters:
            w.cancel()
        if console is not None and not stop.is_set():
            await app.hub.idle()  # end of piped input: answer everything first
            if failed := app.metrics.failed_answers():  # a script must know that answers are missing
                print(f"bothub: {failed} answer(s) failed", file=sys.stderr)
                exit_code = 1
    except (ConfigError, OSError) as e:  # a platform refused the credentials at start, or the port is taken
        print(f"bothub: {e}", file=sys.stderr)
        return 2
    finally:
        await app.stop()
    return exit_code


async def _adapter_command(cfg: Config, spec: AdapterSpec[Any], command: CliCommand[Any],
                           args: argparse.Namespace, env: dict[str, str]) -> int:
    section = cfg.sections.get(spec.name) or spec.config_model()
    try:
        return await command.run(section, env, args, menu())
    except ConfigError as e:
        print(f"bothub: {e}", file=sys.stderr)
        return 2


def _url_host(host: str) -> str:
    if host in ("0.0.0.0", "::", ""):
        return "127.0.0.1"
    return f"[{host}]" if ":" in host else host


async def _tool(cfg: Config, command: str, args: argparse.Namespace, env: dict[str, str]) -> int:
    from bot.cli import maintenance  # the one-shot maintenance commands live apart from serving

    return await maintenance.run(cfg, command, args, env)
