"""Each chat's own folder for file tools and attachments, derived from its storage key alone."""

from __future__ import annotations

import hashlib
import re
from pathlib import Path

from bot.jail import unlink


def chat_folder(data_dir: Path, storage_key: str) -> Path:
    """A readable name plus a hash of the key, so two keys never share a folder."""
    safe = re.sub(r"[^A-Za-z0-9_.-]", "_", storage_key)[:60]
    digest = hashlib.sha256(storage_key.encode()).hexdigest()[:8]
    return data_dir / "chats" / f"{safe}-{digest}"


def remove_files(folder: Path, paths: tuple[str, ...]) -> int:
    """Delete files named relative to a chat's folder (never anything outside it, never through a link);
    returns how many went. Blocking: run it off the event loop."""
    return sum(unlink(folder, relative) for relative in paths)
