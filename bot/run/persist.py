"""A run's third step, persisting: every step of the answer goes into the conversation tree as it happens."""

from __future__ import annotations

import asyncio

from bot.agent.events import StepMessage
from bot.chats.conversations import Conversations
from bot.chats.sessions import Session
from bot.run.turn import Ticket, TurnContext
from bot.store.claims import NotOwner
from bot.tree.model import Message


class Transcript:
    """One run's writes. Tool calls and results are stored as they come; the answer's own write waits until it
    was delivered (`close`) and then carries the finish of the inbox entry it answers (one round trip). A run
    cut short keeps what was said so far, marked interrupted."""

    def __init__(self, conversations: Conversations, session: Session, turn: TurnContext, trace_id: str) -> None:
        self._conversations = conversations
        self._session = session
        self._turn = turn
        self._trace_id = trace_id
        self._stored: asyncio.Future[int | None] = asyncio.get_running_loop().create_future()
        self.partial = ""  # the text of the model turn under way
        self.answered = False  # the final answer is stored (its write waits for `close`)
        self.answer_id: str | None = None  # its node's id, known before it is shown (feedback controls name it)

    def text(self, delta: str) -> None:
        self.partial += delta

    def step(self, event: StepMessage) -> None:
        self.answered = event.role == "assistant" and not event.tool_calls  # RunFinished follows
        self.partial = self.partial if self.answered else ""
        message = Message.new(event.role, event.content, tool_calls=event.tool_calls, tool_call_id=event.tool_call_id,
                              job_id=self._turn.job_id, trace_id=self._trace_id)
        self.answer_id = message.id if self.answered else None
        self._conversations.add(self._session, message, self._stored if self.answered else None)

    @staticmethod
    async def confirm(conversations: Conversations, session: Session) -> None:
        """Before the model is asked: the run's writes so far (the user's message, written while the prompt was
        built) are stored, or NotOwner when this replica was fenced off (another owns the chat: the run ends with
        no reply). Any other failure is left for `flush` at the end, as before."""
        try:
            await conversations.flush(session)
        except NotOwner:
            raise
        except Exception:
            return

    def close(self, delivered: bool) -> Ticket | None:
        """Release the answer's write: shown first, stored right after together with the finish of its inbox
        entry (the ticket returned); cut short, the answer is stored alone and the hub decides about the entry."""
        finishes = self._turn.ticket if delivered and self.answered else None
        self._stored.set_result(finishes.entry if finishes else None)
        return finishes

    async def flush(self, finishes: Ticket | None) -> None:
        """Wait for the run's writes; the entry finished with the answer needs nothing more from the hub."""
        await self._conversations.flush(self._session)
        if finishes is not None:
            finishes.finished = True

    async def keep_partial(self) -> None:
        """A stopped or timed-out run keeps what was said so far, marked interrupted (a whole answer cut short
        while it was being shown is stored as it is)."""
        if self.partial.strip() and not self.answered:
            await self._conversations.append(self._session, Message.new("assistant", self.partial, interrupted=True,
                                                                        trace_id=self._trace_id))
