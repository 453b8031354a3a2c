"""The house stays layered: every import in bot/ points to the same layer or a lower one, and no cycle;
adapters/ reach into bot/ only through the contract, config, i18n and the HTTP kit.

Layers, lowest first. A module may import its own layer and those below; one that needs something
higher is in the wrong place (or needs a Protocol in its own layer that the higher one satisfies).
"""

from __future__ import annotations

import ast
import functools
from pathlib import Path

BOT = Path(__file__).resolve().parents[2] / "bot"

LAYERS: tuple[tuple[str, ...], ...] = (
    # bot.jail: no-follow opens inside chat folders; i18n: one table in seven files
    ("bot.messages", "bot.replies", "bot.i18n", "bot.i18n_web", "bot.i18n_cli", "bot.i18n_help", "bot.i18n_tree",
     "bot.i18n_fleet", "bot.i18n_tasks", "bot.jail"),
    ("bot.adapter",),  # the adapter contract and spec discovery
    ("bot.config", "bot.llmconfig", "bot.toolconfig"),  # platform sections from the specs; model and tools apart
    ("bot.httpkit",),  # what the HTTP adapters share with the dashboard: SSE, sign-in, CSRF, Markdown, netguard
    ("bot.delivery",),  # sending, editing, pacing, "typing…", the final edit: what an adapter needs around it
    ("bot.tree", "bot.ops"),
    ("bot.media",),  # attachments to files: capped, sniffed, images normalized
    ("bot.store",),
    ("bot.fleet",),  # agents, identities, bindings: the model, sealed credentials, the catalog routing reads
    ("bot.replicas",),  # which chats and shared roles this replica holds: the store's claims, nothing above
    ("bot.scheduler",),  # time forms, next due times, the claiming loop; runs reach chats via bot.hub.scheduled
    ("bot.agent", "bot.skills_builtin"),  # the built-in skills are data the agent's skill loader reads
    ("bot.chats",),
    ("bot.lanes",),  # the one door into a chat's lane: ownership, the session cache, submitting
    ("bot.run",),  # one agent turn, a file per step: prompt, model turns, persisting, the hand-off to delivery
    ("bot.commands",),
    ("bot.hub",),
    ("bot.live",),  # the fleet at run time: each identity's adapter started and stopped, agents' runners rebuilt
    ("bot.web",),  # the dashboard: reads the store, acts through the hub's services and the live fleet
    ("bot.app",),
    ("bot.cli", "bot.__main__"),
)


def layer(module: str) -> int:
    for index, prefixes in enumerate(LAYERS):
        if any(module == p or module.startswith(p + ".") for p in prefixes):
            return index
    raise AssertionError(f"{module} is in no layer: add it to LAYERS in {Path(__file__).name}")


def module_name(path: Path) -> str:
    parts = path.relative_to(BOT.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def imports(path: Path, package: str = "bot") -> set[str]:
    """Every `package.*` module the file imports, at any depth (TYPE_CHECKING and function-local included)."""
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            if node.module == package:
                found.update(f"{package}.{alias.name}" for alias in node.names)
            elif node.module.startswith(package + "."):
                found.add(node.module)
        elif isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names if alias.name.split(".")[0] == package)
    return found


@functools.cache
def graph() -> dict[str, frozenset[str]]:
    """Module → the bot modules it imports; the empty top-level package itself is left out."""
    return {module_name(p): frozenset(imports(p)) for p in sorted(BOT.rglob("*.py")) if p != BOT / "__init__.py"}


def test_every_import_points_down_or_sideways() -> None:
    upward = [f"{source} (layer {layer(source)}) imports {target} (layer {layer(target)})"
              for source, targets in graph().items() for target in sorted(targets) if layer(target) > layer(source)]
    assert upward == []


def test_no_import_cycle() -> None:
    edges = graph()
    modules = set(edges)

    def resolve(target: str) -> str | None:  # `from bot.x import y` may name a package's submodule
        while target and target not in modules:
            target = target.rpartition(".")[0]
        return target or None

    state: dict[str, int] = {}  # 1: on the current path, 2: done
    cycles: list[list[str]] = []

    def visit(module: str, path: list[str]) -> None:
        state[module] = 1
        for raw in sorted(edges[module]):
            target = resolve(raw)
            if target is None or target == module:
                continue
            if state.get(target) == 1:
                cycles.append([*path[path.index(target):], target] if target in path else [module, target])
            elif target not in state:
                visit(target, [*path, target])
        state[module] = 2

    for module in sorted(modules):
        if module not in state:
            visit(module, [module])
    assert cycles == []


def test_layers_cover_the_package() -> None:
    for module in graph():
        layer(module)  # raises for a module nobody placed


ADAPTERS = BOT.parent / "adapters"
# what an adapter may import from bot/: the contract, config, strings and the HTTP kit — nothing else
ADAPTER_IMPORTS = ("bot.adapter", "bot.messages", "bot.replies", "bot.config", "bot.i18n", "bot.httpkit")


def allowed_for_adapter(platform: str, module: str) -> bool:
    own = f"adapters.{platform}"
    if module == own or module.startswith(own + "."):
        return True  # its own folder
    return any(module == p or module.startswith(p + ".") for p in ADAPTER_IMPORTS)


def adapter_violations(root: Path) -> list[str]:
    """`adapters/<platform>/….py imports <module>` for each import outside the allowed set or its own folder."""
    found = []
    for path in sorted(root.rglob("*.py")):
        parts = path.relative_to(root).parts
        platform = parts[0] if len(parts) > 1 else ""
        reached = imports(path) | imports(path, "adapters")
        found += [f"{path.relative_to(root.parent)} imports {module}" for module in sorted(reached)
                  if not allowed_for_adapter(platform, module)]
    return found


def test_adapters_import_only_the_contract_config_i18n_and_the_http_kit() -> None:
    assert adapter_violations(ADAPTERS) == []


def test_the_adapter_check_sees_every_kind_of_import(tmp_path: Path) -> None:
    """Top-level, function-local and TYPE_CHECKING imports of core, and reaching into another adapter."""
    (tmp_path / "adapters" / "seventh").mkdir(parents=True)
    (tmp_path / "adapters" / "seventh" / "adapter.py").write_text(
        "from typing import TYPE_CHECKING\n"
        "import bot.hub.hub, bot\n"
        "from bot.httpkit import sse\n"
        "from bot.messages import ChatRef\n"
        "from adapters.seventh.render import render\n"
        "if TYPE_CHECKING:\n    from bot.store import Store\n"
        "def sync():\n    from bot.commands import menu\n    from adapters.web import render\n",
        encoding="utf-8")
    assert adapter_violations(tmp_path / "adapters") == [
        "adapters/seventh/adapter.py imports adapters.web",
        "adapters/seventh/adapter.py imports bot",
        "adapters/seventh/adapter.py imports bot.commands",
        "adapters/seventh/adapter.py imports bot.hub.hub",
        "adapters/seventh/adapter.py imports bot.store",
    ]
