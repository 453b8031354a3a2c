"""`.env` in the working directory: KEY=VALUE lines read at start-up, never overriding what is already set."""

from __future__ import annotations

import re
from collections.abc import MutableMapping
from pathlib import Path

_LINE = re.compile(r"^\s*(?:export\s+)?([A-Za-z_][A-Za-z0-9_]*)\s*=\s*(.*?)\s*$")


def parse(text: str) -> dict[str, str]:
    """The variables of a .env file: `#` comments, optional `export`, values optionally quoted."""
    found: dict[str, str] = {}
    for line in text.splitlines():
        match = _LINE.match(line)
        if match is None or line.lstrip().startswith("#"):
            continue
        name, value = match.groups()
        if len(value) >= 2 and value[0] == value[-1] and value[0] in "'\"":
            value = value[1:-1]
        else:
            value = re.split(r"\s+#", value, maxsplit=1)[0]  # `KEY=value  # note`
        found[name] = value
    return found


def load(path: Path, environ: MutableMapping[str, str]) -> list[str]:
    """Add the file's variables that `environ` lacks; returns their names (values are secrets: never shown)."""
    try:
        text = path.read_text(encoding="utf-8")
    except (FileNotFoundError, IsADirectoryError):
        return []
    added = {name: value for name, value in parse(text).items() if name not in environ}
    environ.update(added)
    return list(added)
