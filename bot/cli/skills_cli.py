"""`bothub skills list|install|update|uninstall`: skill packages into the workspace, shown before they go in.

Installing lists the files, the skills and the tools they ask for, and asks the operator (the admin at this
terminal) to confirm, or takes --yes. A package asking for the shell also needs --allow-shell: running commands is
the one tool an admin must grant by name. An update shows the diff against the installed version first.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path

from bot.agent import skill_packages as packages
from bot.config import Config
from bot.i18n import t

RISKY_TOOLS = ("shell",)


def arguments(parser: argparse.ArgumentParser, h: Callable[[str], str]) -> None:
    """The subcommand's arguments (help texts from bot/i18n_help.py through `h`)."""
    parser.add_argument("action", choices=["list", "install", "update", "uninstall"], help=h("skills_action"))
    parser.add_argument("source", nargs="?", default="", metavar="PATH|URL|ZIP|NAME", help=h("skills_source"))
    parser.add_argument("--yes", action="store_true", help=h("skills_yes"))
    parser.add_argument("--allow-shell", action="store_true", help=h("skills_allow_shell"))


def run(cfg: Config, args: argparse.Namespace) -> int:
    lang, skills_dir = cfg.language, cfg.workspace_dir / "skills"
    if args.action == "list":
        entries = packages.lock(skills_dir)
        for name, entry in sorted(entries.items()):
            print(t(lang, "cli_skills_entry", name=name, version=entry.get("version"), source=entry.get("source"),
                    digest=str(entry.get("sha256"))[:12]))
        if not entries:
            print(t(lang, "cli_skills_none"))
        return 0
    if not args.source:
        print(t(lang, "cli_skills_needs_source"), file=sys.stderr)
        return 2
    if args.action == "uninstall":
        if not packages.uninstall(skills_dir, args.source):
            print(t(lang, "cli_skills_not_installed", name=args.source), file=sys.stderr)
            return 1
        print(t(lang, "cli_skills_removed", name=args.source))
        return 0
    with tempfile.TemporaryDirectory(prefix="bothub-skill-") as folder:
        try:
            package = packages.read_package(packages.fetch(args.source, Path(folder) / "package"))
        except (packages.PackageError, OSError) as e:
            print(t(lang, "cli_skills_bad", error=e), file=sys.stderr)
            return 1
        return _confirm_and_install(cfg, args, package, skills_dir)


def _confirm_and_install(cfg: Config, args: argparse.Namespace, package: packages.Package, skills_dir: Path) -> int:
    lang = cfg.language
    installed = packages.lock(skills_dir).get(package.name)
    if args.action == "update" and installed is None:
        print(t(lang, "cli_skills_not_installed", name=package.name), file=sys.stderr)
        return 1
    if args.action == "install" and installed is not None:
        print(t(lang, "cli_skills_already", name=package.name), file=sys.stderr)
        return 1
    print(t(lang, "cli_skills_package", name=package.name, version=package.version, digest=package.digest[:12],
            description=package.description))
    for relative, data in package.files.items():
        print(f"  {relative} ({len(data)} B)")
    print(t(lang, "cli_skills_tools", tools=", ".join(package.tools) or "-"))
    if args.action == "update":
        print(packages.diff(skills_dir, package) or t(lang, "cli_skills_same"))
    risky = [tool for tool in package.tools if tool in RISKY_TOOLS]
    if risky and not args.allow_shell:
        print(t(lang, "cli_skills_shell", tools=", ".join(risky)), file=sys.stderr)
        return 1
    if not args.yes and input(t(lang, "cli_skills_confirm")).strip().lower() not in ("y", "yes", "是"):
        print(t(lang, "cli_skills_cancelled"))
        return 1
    packages.install(skills_dir, package, args.source)
    print(t(lang, "cli_skills_installed", name=package.name, digest=package.digest[:12]))
    return 0
