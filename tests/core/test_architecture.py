"""The house stays layered: every import in bot/ points to the same layer or a lower one, and no cycle.

Layers, lowest first. A module may import its own layer and those below; one that needs something
higher is in the wrong place (or needs a Protocol in its own layer that the higher one satisfies).
"""

from __future__ import annotations

import ast
import functools
from pathlib import Path

BOT = Path(__file__).resolve().parents[2] / "bot"

LAYERS: tuple[tuple[str, ...], ...] = (
    ("bot.messages", "bot.replies", "bot.i18n"),
    ("bot.adapter",),  # the adapter contract and spec discovery
    ("bot.config",),  # platform sections come from the adapter specs
    ("bot.tree", "bot.ops"),
    ("bot.media",),  # attachments to files: capped, sniffed, images normalized
    ("bot.store",),
    ("bot.scheduler",),  # time forms, next due times, the claiming loop; runs reach chats via bot.hub.scheduled
    ("bot.agent",),
    ("bot.chats",),
    ("bot.commands",),
    ("bot.hub",),
    ("bot.web",),  # the dashboard: reads the store, acts through the hub's services
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


def imports(path: Path) -> set[str]:
    """Every `bot.*` module the file imports, at any depth (TYPE_CHECKING and function-local included)."""
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            if node.module == "bot":
                found.update(f"bot.{alias.name}" for alias in node.names)
            elif node.module.startswith("bot."):
                found.add(node.module)
        elif isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names if alias.name.startswith("bot."))
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
