"""Summaries of the oldest part of a branch, stored on the tree node where the summarized span ends.

Every branch below that node shares the span, so each reuses the one summary instead of making its own.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Protocol


@dataclass(frozen=True, slots=True)
class Summary:
    message_id: str  # the last message the summary covers
    content: str
    covered: int  # messages from the root to message_id (inclusive) it stands for
    created_at: datetime


class SummaryStore(Protocol):
    async def put(self, chat: str, conv_id: str, message_id: str, content: str, covered: int) -> Summary:
        """Store (or replace) the summary ending at a message; KeyError if the chat has no such message."""
        ...

    async def of_conversation(self, chat: str, conv_id: str) -> dict[str, Summary]:
        """Every summary of one conversation by message id (one per compaction, so a few)."""
        ...
