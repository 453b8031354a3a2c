"""Duels and their votes (`/duel`, `/vote`): which answers competed, written by which model of which agent, on what
topic, and whom each voter chose. A duel's answers are sibling nodes of the tree; these rows say they were a duel
and hold its votes, so win rates per model, agent and topic need no trace (traces are pruned)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal, Protocol

By = Literal["model", "agent"]


@dataclass(frozen=True, slots=True)
class Entry:
    """One answer of a duel: the node (`message_id`), the model that wrote it and the agent it answered as ('' in
    duels recorded before agents were)."""

    message_id: str
    model: str
    agent: str = ""


@dataclass(frozen=True, slots=True)
class WinRate:
    name: str  # a model or an agent
    wins: int  # votes for its answers
    ballots: int  # votes cast in duels it took part in

    @property
    def rate(self) -> float:
        return self.wins / self.ballots if self.ballots else 0.0


def win_rates_sql(by: By, topic: bool, marks: tuple[str, str]) -> str:
    """Win rates per model or agent, of one topic or all: a vote counts once for each name in its duel (two answers
    of one agent are one ballot). The SQL both backends share, with their spelling of the first and second
    placeholder (the topic, if given, then the limit)."""
    column = {"model": "d.model", "agent": "d.agent"}[by]
    where = f"WHERE d.topic = {marks[0]}" if topic else ""
    return f"""SELECT name, SUM(win), COUNT(*) FROM (
                   SELECT {column} AS name, MAX(CASE WHEN v.message_id = d.message_id THEN 1 ELSE 0 END) AS win
                   FROM votes v JOIN duels d ON d.chat = v.chat AND d.duel = v.duel {where}
                   GROUP BY v.chat, v.duel, v.voter, {column}) AS ballots
               GROUP BY name ORDER BY 2 DESC, 1 LIMIT {marks[1] if topic else marks[0]}"""


# the topic tags duels were given, each with its number of duels
TOPICS = "SELECT topic, COUNT(DISTINCT chat || ' ' || duel) FROM duels GROUP BY topic ORDER BY 2 DESC, 1 LIMIT {limit}"


class VoteStore(Protocol):
    async def entered(self, chat: str, conversation_id: str, duel: str, entries: Sequence[Entry],
                      topic: str = "") -> None:
        """Record a duel's answers (stored in the tree already), in the order shown, and its topic tag."""
        ...

    async def vote(self, chat: str, conversation_id: str, message_id: str, voter: str) -> Entry | None:
        """`voter` chooses this answer in its duel (an earlier vote of theirs in the same duel is replaced);
        None when the node is no duel's answer in this chat."""
        ...

    async def rivals(self, chat: str, conversation_id: str, message_id: str) -> list[Entry]:
        """Every answer of the duel this node is in, in the order shown; [] when it is no duel's answer."""
        ...

    async def win_rates(self, limit: int = 20, *, by: By = "model", topic: str | None = None) -> list[WinRate]:
        """Per model (or agent) over every chat, of one topic tag or all, most wins first."""
        ...

    async def topics(self, limit: int = 20) -> list[tuple[str, int]]:
        """The topic tags of duels ('' for untagged ones) with how many duels each has, most first."""
        ...
