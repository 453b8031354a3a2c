"""`bothub run | chat | init | onboard | doctor | chats | export | import | pair`, plus the commands adapters
contribute."""

from __future__ import annotations

import argparse
import logging
import os
import sys
from collections.abc import Sequence
from importlib import metadata
from pathlib import Path
from typing import Any

from bot.adapter import AdapterSpec, CliCommand, installed_specs
from bot.cli import envfile, fleet_args, serve, skills_cli
from bot.commands import menu
from bot.config import Config, ConfigError, llm_setup_hint, load_config, shell_admins_problem
from bot.i18n import t
from bot.ops import eventloop, redact, tracelog

log = logging.getLogger("bothub")
CONSOLE_CHAT = "console:local"
QUIET_LOGGERS = ("httpx", "httpx2", "httpcore")


def build_parser(specs: Sequence[AdapterSpec[Any]] = (), lang: str = "en") -> argparse.ArgumentParser:
    """The global options are accepted before and after the subcommand (`bothub chat --data-dir D`); the help
    speaks BOTHUB_LANGUAGE (the config file is not read yet when it is shown)."""
    def h(key: str, **values: object) -> str:
        return t(lang, f"help_{key}", **values)

    common = argparse.ArgumentParser(add_help=False)
    common.add_argument("--config", type=Path, default=argparse.SUPPRESS, metavar="FILE", help=h("config"))
    common.add_argument("--data-dir", type=Path, default=argparse.SUPPRESS, metavar="DIR", help=h("data_dir"))
    common.add_argument("--port", type=int, default=argparse.SUPPRESS, metavar="N", help=h("port"))
    common.add_argument("--host", default=argparse.SUPPRESS, metavar="ADDR", help=h("host"))
    parser = argparse.ArgumentParser(prog="bothub", parents=[common], description=h("bothub"), epilog=h("epilog"))
    parser.add_argument("--version", action="version", version=f"bothub {_version()}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")

    def add(name: str, text: str) -> argparse.ArgumentParser:
        return sub.add_parser(name, parents=[common], help=text, description=text)

    add("run", h("run"))
    chat = add("chat", h("chat"))
    chat.add_argument("--chat", default="local", metavar="NAME", help=h("chat_name"))
    chat.add_argument("--trace", action="store_true", help=h("chat_trace"))
    init = add("init", h("init"))
    init.add_argument("path", nargs="?", type=Path, help=h("init_path"))
    add("onboard", h("onboard"))
    add("doctor", h("doctor"))
    add("chats", h("chats"))
    export = add("export", h("export"))
    export.add_argument("conversation_id", metavar="ID", help=h("export_id"))
    export.add_argument("--chat", default=CONSOLE_CHAT, metavar="KEY", help=h("export_chat", default=CONSOLE_CHAT))
    forget = add("forget", h("forget"))
    who = forget.add_mutually_exclusive_group(required=True)
    who.add_argument("--chat", metavar="KEY", help=h("forget_chat"))
    who.add_argument("--user", metavar="PLATFORM:ID", help=h("forget_user"))
    replay = add("replay", h("replay"))
    replay.add_argument("--chat", required=True, metavar="KEY", help=h("forget_chat"))
    replay.add_argument("--since", required=True, metavar="YYYY-MM-DD", help=h("replay_since"))
    replay.add_argument("--model", metavar="NAME", help=h("replay_model"))
    imp = add("import", h("import"))
    imp.add_argument("file", type=Path, help=h("import_file"))
    imp.add_argument("--chat", default=CONSOLE_CHAT, metavar="KEY", help=h("import_chat", default=CONSOLE_CHAT))
    migrate = add("migrate-store", h("migrate"))
    migrate.add_argument("--from", dest="source", metavar="URL", help=h("migrate_from"))
    migrate.add_argument("--to", dest="target", required=True, metavar="URL", help="postgresql://user@host/db")
    token = add("api-token", h("token"))
    token.add_argument("action", choices=["create", "list", "revoke"], help=h("token_action"))
    token.add_argument("value", nargs="?", default="", metavar="NAME|ID", help=h("token_value"))
    add("set-password", h("set_password"))
    service = add("install-service", h("service"))
    service.add_argument("--root", type=Path, default=Path("/"), metavar="DIR", help=h("service_root"))
    pair = add("pair", h("pair"))
    pair.add_argument("action", choices=["approve"], help=h("pair_action"))
    pair.add_argument("code", help=h("pair_code"))
    pair.add_argument("--platform", required=True, choices=[s.name for s in specs if s.config_model().access],
                      help=h("pair_platform"))
    fleet_args.arguments(add, h)
    skills_cli.arguments(add("skills", h("skills")), h)
    for spec in specs:
        for extra in spec.commands:
            contributed = add(extra.name, extra.help)
            extra.arguments(contributed)
            contributed.add_argument("--identity", metavar="NAME", help=h("as_identity"))
            sub.choices[extra.name].set_defaults(adapter_command=(spec, extra))
    return parser


def _server_options(cfg: Config, args: argparse.Namespace) -> str | None:
    """--port and --host win over BOTHUB_PORT/BOTHUB_HOST and the config file."""
    port: int | None = getattr(args, "port", None)
    if port is not None:
        if not 0 <= port <= 65535:
            return t(cfg.language, "cli_port_range", port=port)
        cfg.server.port = port
    cfg.server.host = getattr(args, "host", cfg.server.host)
    return None


def _version() -> str:
    try:
        return metadata.version("bothub")
    except metadata.PackageNotFoundError:
        return "unknown"


def main(argv: list[str] | None = None) -> int:
    os.umask(0o077)  # the database, chat folders and exports are the owner's alone
    from_env_file = envfile.load(Path(".env"), os.environ)
    specs = installed_specs()
    args = build_parser(specs, os.environ.get("BOTHUB_LANGUAGE", "en")).parse_args(argv)
    if args.command == "onboard":  # before the config is read: it writes it
        from bot.cli import onboard

        return onboard.run(from_env_file)
    config_arg: Path | None = getattr(args, "config", None)
    data_dir: Path | None = getattr(args, "data_dir", None)

    try:
        cfg = load_config(config_arg)
    except ConfigError as e:
        print(f"bothub: {e}", file=sys.stderr)
        return 2
    if data_dir:
        cfg.data_dir = data_dir
    if (problem := _server_options(cfg, args)) is not None:
        print(f"bothub: {problem}", file=sys.stderr)
        return 2
    command = args.command or "run"
    terminal = command == "chat" or not serve.headless()
    console_only = terminal and (command == "chat" or (command == "run" and not cfg.enabled_platforms))
    level = cfg.log_level
    if console_only and "BOTHUB_LOG_LEVEL" not in os.environ and level == "INFO":
        level = "WARNING"  # the terminal is the chat: only problems go to stderr
    logging.basicConfig(level=level, format=tracelog.LOG_FORMAT)
    tracelog.install()  # every line logged during an agent run names its trace
    env = dict(os.environ)  # the secrets stay here, handed to what needs them, and leave the process environment
    cfg.network.apply(env)  # network.proxy: the proxy variables every outbound client reads
    redact.install(env)  # tokens and keys never reach the log, whoever logs them (names from the specs)
    redact.route_library_loggers()
    redact.scrub_environment(os.environ)
    config_path = config_arg or Path(env.get("BOTHUB_CONFIG") or "bothub.yaml")
    if warning := redact.readable_secrets_warning(config_path):
        log.warning("%s", warning)
    for name, meant in envfile.unknown_names(env):
        log.warning("%s", t(cfg.language, "cli_env_unknown_meant" if meant else "cli_env_unknown", name=name,
                            meant=meant))
    for noisy in QUIET_LOGGERS + tuple(name for spec in specs for name in spec.loggers):
        logging.getLogger(noisy).setLevel(max(logging.WARNING, logging.getLogger().level))
    if (contributed := getattr(args, "adapter_command", None)) is not None:
        spec, extra = contributed
        return eventloop.run(_adapter_command(cfg, spec, extra, args, env))
    if command in fleet_args.COMMANDS:
        from bot.cli import fleet  # agents, identities, bindings: the store, and each platform's check

        return eventloop.run(fleet.run(cfg, command, args, env))
    if command == "install-service":
        from bot.cli import service  # as root, once: nothing of serving is needed

        return service.install(args.root, cfg.language)
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
        names = serve.prepare(cfg, platforms, env, terminal)
        if isinstance(names, str):
            print(f"bothub: {names}", file=sys.stderr)
            return 2
        env["BOTHUB_CONSOLE_CHAT"] = chat = getattr(args, "chat", "local")
        env["BOTHUB_CONSOLE_HISTORY"] = str(cfg.data_dir / "console" / f"{chat}.history")
        return eventloop.run(serve.serve(cfg, names, env, web_only=serve.CONSOLE not in names and not platforms,
                                         trace=bool(getattr(args, "trace", False)), guest=command == "chat"))
    return eventloop.run(_tool(cfg, command, args, env))


async def _adapter_command(cfg: Config, spec: AdapterSpec[Any], command: CliCommand[Any],
                           args: argparse.Namespace, env: dict[str, str]) -> int:
    section = cfg.sections.get(spec.name) or spec.config_model()
    try:
        if getattr(args, "identity", None):  # the command for a stored identity's account, not the default one
            from bot.cli.fleet import account_of

            section, env = await account_of(cfg, spec.name, args.identity, env)
        return await command.run(section, env, args, menu())
    except ConfigError as e:
        print(f"bothub: {e}", file=sys.stderr)
        return 2


async def _tool(cfg: Config, command: str, args: argparse.Namespace, env: dict[str, str]) -> int:
    from bot.cli import maintenance  # the one-shot maintenance commands live apart from serving

    return await maintenance.run(cfg, command, args, env)
