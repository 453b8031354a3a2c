"""Duels and their votes (`/duel`, `/vote`): which answers competed, written by which model, and whom each voter
chose. A duel's answers are sibling nodes of the tree; these rows say they were a duel and hold its votes, so
win rates per model need no trace (traces are pruned)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Protocol


@dataclass(frozen=True, slots=True)
class Entry:
    """One answer of a duel: the node (`message_id`) and the model that wrote it."""

    message_id: str
    model: str


@dataclass(frozen=True, slots=True)
class WinRate:
    model: str
    wins: int  # votes for this model's answers
    ballots: int  # votes cast in duels it took part in

    @property
    def rate(self) -> float:
        return self.wins / self.ballots if self.ballots else 0.0


# win rates per model, the SQL both backends share (`limit` is the placeholder's spelling)
WIN_RATES = """SELECT d.model, SUM(CASE WHEN v.message_id = d.message_id THEN 1 ELSE 0 END), COUNT(*)
               FROM votes v JOIN duels d ON d.chat = v.chat AND d.duel = v.duel
               GROUP BY d.model ORDER BY 2 DESC, 1 LIMIT {limit}"""


class VoteStore(Protocol):
    async def entered(self, chat: str, conversation_id: str, duel: str, entries: Sequence[Entry]) -> None:
        """Record a duel's answers (stored in the tree already)."""
        ...

    async def vote(self, chat: str, conversation_id: str, message_id: str, voter: str) -> Entry | None:
        """`voter` chooses this answer in its duel (an earlier vote of theirs in the same duel is replaced);
        None when the node is no duel's answer in this chat."""
        ...

    async def win_rates(self, limit: int = 20) -> list[WinRate]:
        """Per model over every chat, most wins first."""
        ...
