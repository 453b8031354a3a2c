"""The fleet's subcommands on `bothub`'s parser (bot/cli/fleet.py runs them, imported only when one is run)."""

from __future__ import annotations

import argparse
from collections.abc import Callable
from pathlib import Path

COMMANDS = ("agents", "identities", "bind", "apply", "secrets")


def arguments(add: Callable[[str, str], argparse.ArgumentParser], h: Callable[[str], str]) -> None:
    """The fleet's subcommands, on `bothub`'s parser."""
    agents = add("agents", h("agents"))
    agents.add_argument("action", nargs="?", default="list", choices=["list", "set", "remove", "history"],
                        help=h("fleet_action"))
    agents.add_argument("name", nargs="?", help=h("fleet_name"))
    agents.add_argument("--workspace", type=Path, help=h("fa_workspace"))
    agents.add_argument("--model", help=h("fa_model"))
    agents.add_argument("--language", choices=["en", "zh"], help=h("fa_language"))
    agents.add_argument("--admins", help=h("fa_admins"))
    agents.add_argument("--allow-tools", help=h("fa_allow"))
    agents.add_argument("--deny-tools", help=h("fa_deny"))
    agents.add_argument("--mcp", help=h("fa_mcp"))
    agents.add_argument("--no-shell", action="store_true", help=h("fa_no_shell"))
    identities = add("identities", h("identities"))
    identities.add_argument("action", nargs="?", default="list",
                            choices=["list", "add", "enable", "disable", "remove"], help=h("fleet_action"))
    identities.add_argument("name", nargs="?", help=h("fleet_name"))
    identities.add_argument("--platform", help=h("fa_platform"))
    identities.add_argument("--credential", action="append", default=[], metavar="VAR[=ENV]", help=h("credential"))
    identities.add_argument("--set", action="append", default=[], metavar="KEY=VALUE", help=h("setting"))
    identities.add_argument("--no-check", action="store_true", help=h("fa_no_check"))
    bind = add("bind", h("bind"))
    bind.add_argument("identity", nargs="?", help=h("fa_identity"))
    bind.add_argument("agent", nargs="?", help=h("fa_agent"))
    bind.add_argument("--chat", help=h("fa_chat"))
    bind.add_argument("--thread", help=h("fa_thread"))
    bind.add_argument("--user", help=h("fa_user"))
    bind.add_argument("--kind", choices=["dm", "group"], help=h("fa_kind"))
    bind.add_argument("--list", action="store_true", help=h("fa_list"))
    bind.add_argument("--remove", action="store_true", help=h("fa_remove"))
    file = add("apply", h("apply"))
    file.add_argument("file", type=Path, help=h("fa_file"))
    file.add_argument("--yes", action="store_true", help=h("yes"))
    file.add_argument("--prune", action="store_true", help=h("prune"))
    secrets = add("secrets", h("secrets"))
    secrets.add_argument("action", choices=["new-key", "rotate-key"], help=h("fleet_action"))
    for parser in (agents, identities, bind, file):
        parser.add_argument("--json", action="store_true", help=h("json"))
