"""Hand-off codes: a one-time, expiring code that lets a conversation continue in another chat (`/handoff`), or
links two chats for good (`/handoff link`): the links, each chat that shares another chat's history, are kept
here too."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol


@dataclass(frozen=True, slots=True)
class Handoff:
    code: str
    chat: str  # the source chat's storage key
    conversation_id: str
    platform: str  # where it was made and by whom: the same platform needs the same person to resume it
    user_id: str
    move: bool  # the source keeps it (copy) or archives it once resumed (move)
    expires_at: float  # wall clock (seconds)
    link: bool = False  # resumed, the other chat shares this chat's whole history from then on


class HandoffStore(Protocol):
    async def offer(self, handoff: Handoff, now: float) -> None:
        """Store a new code (codes that expired by `now` are dropped on the way)."""
        ...

    async def peek(self, code: str, now: float) -> Handoff | None:
        """The code's hand-off if it is still valid, without spending it (to say why a resume is refused)."""
        ...

    async def take(self, code: str, now: float) -> Handoff | None:
        """Spend a still valid code, in one statement: of two resumes at once only one gets it."""
        ...

    async def link(self, alias: str, home: str, now: float) -> None:
        """`alias` shares `home`'s history from now on (replacing a link it had); chats that shared `alias`'s
        history share `home`'s with it, so a link never leads to another link."""
        ...

    async def unlink(self, alias: str) -> str | None:
        """`alias` has its own history again; the home it shared, or None when it shared none."""
        ...

    async def links(self) -> dict[str, str]:
        """Every link, alias → home (a handful per person who asked: read whole at start)."""
        ...
