"""`.env` in the working directory, read with python-dotenv's rules (comments, quotes, `export`, multi-line
values), never overriding what the environment already says; and a word about `BOTHUB_*` names nobody reads."""

from __future__ import annotations

import difflib
from collections.abc import Iterable, MutableMapping
from pathlib import Path

from dotenv import dotenv_values

# Every BOTHUB_* variable something reads; a name outside this set is a typo or a setting that does not exist.
KNOWN = frozenset({
    "BOTHUB_ADMIN_PASSWORD", "BOTHUB_CONFIG", "BOTHUB_CONSOLE_CHAT",
    "BOTHUB_CONSOLE_HISTORY", "BOTHUB_DATABASE_URL", "BOTHUB_DATA_DIR",
    "BOTHUB_HOST", "BOTHUB_LANGUAGE", "BOTHUB_LOG_LEVEL", "BOTHUB_MODEL", "BOTHUB_PORT", "BOTHUB_REPLICA_ID",
    "BOTHUB_WORKSPACE",
    "BOTHUB_SCREENSHOTS", "BOTHUB_CHROMIUM",  # the browser tests: save pictures to docs/img/, which browser
})


def parse(path: Path) -> dict[str, str]:
    """The file's variables; a bare `NAME` line (no `=`) sets nothing."""
    if not path.is_file():
        return {}
    return {name: value for name, value in dotenv_values(path, encoding="utf-8").items() if value is not None}


def load(path: Path, environ: MutableMapping[str, str]) -> list[str]:
    """Add the file's variables that `environ` lacks; returns their names (values are secrets: never shown)."""
    added = {name: value for name, value in parse(path).items() if name not in environ}
    environ.update(added)
    return list(added)


def unknown_names(names: Iterable[str]) -> list[tuple[str, str | None]]:
    """(name, the known name it was probably meant to be) for every BOTHUB_* variable nobody reads."""
    found = []
    for name in sorted(n for n in names if n.startswith("BOTHUB_") and n not in KNOWN):
        close = difflib.get_close_matches(name, KNOWN, n=1, cutoff=0.7)
        found.append((name, close[0] if close else None))
    return found
