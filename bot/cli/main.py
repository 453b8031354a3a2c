"""`bothub run | chat | init | doctor | export | import | pair`, plus the commands adapters contribute."""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import logging
import os
import signal
import sys
from pathlib import Path
from typing import Any, Protocol, runtime_checkable

from bot.adapter import AdapterSpec, CliCommand, installed_specs
from bot.app import App
from bot.config import Config, ConfigError, llm_setup_hint, load_config
from bot.ops import redact

log = logging.getLogger("bothub")
CONSOLE = "console"  # the local terminal chat: `bothub chat`, and `run` when no platform is configured
QUIET_LOGGERS = ("httpx", "httpx2", "httpcore")


@runtime_checkable
class Interactive(Protocol):
    """An adapter whose input can end (the terminal at EOF): serving stops when it does."""

    async def wait_closed(self) -> None: ...


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="bothub", description="One LLM agent in your chats.")
    parser.add_argument("--config", type=Path, help="YAML config file (default: ./bothub.yaml or $BOTHUB_CONFIG)")
    parser.add_argument("--data-dir", type=Path, help="where the database and chat folders live (default ./data)")
    sub = parser.add_subparsers(dest="command")
    sub.add_parser("run", help="start the hub (the console chat when no platform is configured)")
    chat = sub.add_parser("chat", help="chat in this terminal; reads piped stdin line by line")
    chat.add_argument("--chat", default="local", help="local chat name (separate history per name)")
    init = sub.add_parser("init", help="create a workspace with the default files")
    init.add_argument("path", nargs="?", type=Path)
    sub.add_parser("doctor", help="check workspace, config, LLM endpoint and platform credentials")
    export = sub.add_parser("export", help="print a conversation as JSONL")
    export.add_argument("conversation_id")
    export.add_argument("--chat", default="console:local", help="the chat that owns it (default console:local)")
    imp = sub.add_parser("import", help="import a JSONL conversation into a chat")
    imp.add_argument("file", type=Path)
    imp.add_argument("--chat", default="console:local")
    specs = installed_specs()
    pair = sub.add_parser("pair", help="approve a DM pairing code (dm_policy: pairing)")
    pair.add_argument("action", choices=["approve"])
    pair.add_argument("code")
    pair.add_argument("--platform", required=True, choices=[s.name for s in specs if s.config_model().access])
    for spec in specs:
        for extra in spec.commands:
            extra.arguments(sub.add_parser(extra.name, help=extra.help))
            sub.choices[extra.name].set_defaults(adapter_command=(spec, extra))
    args = parser.parse_args(argv)

    try:
        cfg = load_config(args.config)
    except ConfigError as e:
        print(f"bothub: {e}", file=sys.stderr)
        return 2
    if args.data_dir:
        cfg.data_dir = args.data_dir
    command = args.command or "run"
    console_only = command == "chat" or (command == "run" and not cfg.enabled_platforms)
    level = cfg.log_level
    if console_only and "BOTHUB_LOG_LEVEL" not in os.environ and level == "INFO":
        level = "WARNING"  # the terminal is the chat: only problems go to stderr
    logging.basicConfig(level=level, format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    redact.install(os.environ)  # tokens and keys never reach the log, whoever logs them (names from the specs)
    config_path = args.config or Path(os.environ.get("BOTHUB_CONFIG") or "bothub.yaml")
    if warning := redact.readable_secrets_warning(config_path):
        log.warning("%s", warning)
    for noisy in QUIET_LOGGERS + tuple(name for spec in specs for name in spec.loggers):
        logging.getLogger(noisy).setLevel(max(logging.WARNING, logging.getLogger().level))
    if (contributed := getattr(args, "adapter_command", None)) is not None:
        spec, extra = contributed
        return asyncio.run(_adapter_command(cfg, spec, extra, args))
    if command in ("run", "chat"):
        if not (cfg.llm.api_key or cfg.llm.base_url):
            print(llm_setup_hint(), file=sys.stderr)
            return 2
        platforms = cfg.enabled_platforms if command == "run" else []
        chat_name = getattr(args, "chat", "local")
        return asyncio.run(_serve(cfg, platforms, chat_name))
    return asyncio.run(_tool(cfg, command, args))


async def _serve(cfg: Config, platforms: list[str], chat_name: str) -> int:
    env = {**os.environ, "BOTHUB_CONSOLE_CHAT": chat_name}
    app = App(cfg, env)
    console: Interactive | None = None
    try:
        for name in platforms or [CONSOLE]:
            adapter = app.load_adapter(name)
            if isinstance(adapter, Interactive):
                console = adapter
    except ConfigError as e:
        print(f"bothub: {e}", file=sys.stderr)
        return 2
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGTERM, signal.SIGINT):
        with contextlib.suppress(NotImplementedError):
            loop.add_signal_handler(sig, stop.set)
    try:
        await app.start()
        waiters: list[asyncio.Future[Any]] = [asyncio.ensure_future(stop.wait())]
        if console is not None:
            waiters.append(asyncio.ensure_future(console.wait_closed()))
        await asyncio.wait(waiters, return_when=asyncio.FIRST_COMPLETED)
        for w in waiters:
            w.cancel()
        if console is not None and not stop.is_set():
            await app.hub.idle()  # end of piped input: answer everything first
    except (ConfigError, ConnectionError) as e:  # e.g. a platform refused the credentials at start
        print(f"bothub: {e}", file=sys.stderr)
        return 2
    finally:
        await app.stop()
    return 0


async def _adapter_command(cfg: Config, spec: AdapterSpec[Any], command: CliCommand[Any],
                           args: argparse.Namespace) -> int:
    section = cfg.sections.get(spec.name) or spec.config_model()
    try:
        return await command.run(section, os.environ, args)
    except ConfigError as e:
        print(f"bothub: {e}", file=sys.stderr)
        return 2


async def _tool(cfg: Config, command: str, args: argparse.Namespace) -> int:
    from bot.cli import maintenance  # the one-shot maintenance commands live apart from serving

    return await maintenance.run(cfg, command, args)
