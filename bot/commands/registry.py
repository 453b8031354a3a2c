"""Chat commands are registered like any other handler; help text comes from the registration."""

from __future__ import annotations

import re
from collections.abc import Awaitable, Callable
from dataclasses import dataclass

from bot.adapter import Capabilities, MenuCommand
from bot.chats.sessions import Session
from bot.commands.services import CommandServices, Rerun
from bot.i18n import t
from bot.messages import IncomingMessage
from bot.replies import Reply


class UsageError(Exception):
    """Bad arguments: the hub answers with the command's usage line."""


@dataclass
class CommandContext:
    """One command invocation: the services, who asked where, and how this chat's platform renders."""

    services: CommandServices
    msg: IncomingMessage
    session: Session
    args: str
    lang: str
    is_admin: bool
    caps: Capabilities
    rerun: Rerun

    def t(self, key: str, **values: object) -> str:
        return t(self.lang, key, **values)


CommandFunc = Callable[[CommandContext], Awaitable[Reply | None]]


@dataclass(frozen=True)
class Command:
    name: str
    func: CommandFunc
    help: tuple[str, str]  # (en, zh)
    usage: str
    immediate: bool  # runs at once, outside the session's lane (e.g. /stop while a run is going)
    navigation: bool  # changes the shared conversation: config may limit it to admins in groups
    admin_only: bool
    hidden: bool  # sent by a control (a feedback press), not typed: left out of /help and the platforms' menus


COMMANDS: dict[str, Command] = {}
_COMMAND_RE = re.compile(r"^/([A-Za-z0-9_-]{1,32})(?:\s+(.*))?$", re.S)


def command(
    name: str,
    help_en: str,
    help_zh: str,
    usage: str = "",
    *,
    immediate: bool = False,
    navigation: bool = False,
    admin_only: bool = False,
    hidden: bool = False,
) -> Callable[[CommandFunc], CommandFunc]:
    def register(func: CommandFunc) -> CommandFunc:
        COMMANDS[name] = Command(name, func, (help_en, help_zh), usage or f"/{name}", immediate, navigation, admin_only,
                                 hidden)
        return func

    return register


def menu() -> tuple[MenuCommand, ...]:
    """Every command, for the platforms' native menus (so a new command appears there with no adapter change)."""
    return tuple(MenuCommand(c.name, c.help[0], c.help[1], c.usage) for c in COMMANDS.values() if not c.hidden)


def parse_command(text: str) -> tuple[str, str] | None:
    """`/goto 7` → ("goto", "7"); the seed's bare `/7` → ("goto", "7"); `/forget-me` → ("forget_me", "") (menus
    allow only `_`, people type `-`); not a command → None."""
    match = _COMMAND_RE.match(text.strip())
    if match is None:
        return None
    name, args = match.group(1).lower().replace("-", "_"), (match.group(2) or "").strip()
    if name.isdigit():
        return "goto", name
    return name, args


def page_arg(args: str) -> int:
    """`/list 2` → 1 (zero-based); no argument → 0; anything else is a usage error."""
    args = args.strip()
    if not args:
        return 0
    if not args.isdigit() or int(args) < 1:
        raise UsageError
    return int(args) - 1
