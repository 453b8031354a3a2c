"""A growing answer on a platform: shown at once, then coalesced edits, then the final edit of every part."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import Awaitable, Callable, Sequence

from bot.delivery.sending import Delivery
from bot.messages import ChatRef, SentRef
from bot.replies import Button, Feedback, Reply, reasoning_room, shown_reasoning, split_text

log = logging.getLogger("bothub.delivery")
FIRST_SEND_WAIT = 0.02  # seconds: an answer that arrives in one piece (a quick model) is sent once
RENEW_AT = 0.6  # of a draft's life: a draft unchanged that long is shown again (a long tool call must not blank it)


class StreamWriter:
    """Shows a growing answer: first text at once, then edits no faster than the platform allows.

    Only the newest text matters, so intermediate edits coalesce and are skipped when the chat has no
    budget; `finish` always delivers the complete answer, continuing in new messages past the limit.
    A part that is not the last one no longer changes (`split_text` cuts by a prefix), so it is
    finalized as soon as the answer outgrows it. A draft lives only `draft_life` unless updated, so one that did
    not change for RENEW_AT of that (the model is calling tools) is shown again, for as long as the run that
    streams it goes on.

    `sent` are messages an earlier process sent for this reply: they are edited, not sent again. `on_sent`
    learns the ids whenever a message is added, except the last part of `finish` (what follows it is the
    answer's own write, which ends the reply's life in the inbox). A draft (SentRef.draft) is not a message:
    it is never noted, and the part it previews is sent as a message when it is final.
    """

    def __init__(self, delivery: Delivery, chat: ChatRef, sent: Sequence[str] = (),
                 on_sent: Callable[[list[str]], Awaitable[None]] | None = None, title: str | None = None,
                 sharing: int = 1) -> None:
        self._d = delivery
        self._title = title  # heads the first message (a duel's answer names its model)
        self._buttons: tuple[tuple[Button, ...], ...] = ()  # under the last one, once finished
        self._feedback: Feedback | None = None  # likewise
        self._chat = chat
        caps = delivery.caps
        # `sharing` streams at once in one chat (a duel) share its budget: each edits (sharing + 1) times less
        # often, so all of them get their turn and room stays for the final edits (else the first one starves
        # the others: an intermediate edit is only made with budget to spare)
        pace = 1 if sharing < 2 else sharing + 1
        self._alone = sharing < 2  # a chat shows one draft: streams that share it are messages
        # decided as the answer begins: in a chat whose answers keep its budget busy it goes out whole (a partial
        # would take the slot its next answer's final needs, though a moment later the budget looks spare again),
        # unless it takes longer than the budget needs to refill
        busy = delivery.pacer.busy(chat)
        self._partials_from = time.monotonic() + delivery.pacer.refill(chat) if busy else 0.0
        self._interval = pace * (caps.group_edit_interval if chat.is_group else caps.edit_interval)
        # while the answer shows as a draft (no message budget spent), at the platform's draft pace instead
        drafts, drafter = delivery.drafts.interval, delivery.drafts.drafter
        self._draft_interval = self._interval if drafts is None else pace * drafts
        self._draft_life = drafter.draft_life if drafter is not None else None
        self._renewal: asyncio.TimerHandle | None = None
        self._renewing = False  # this flush shows the draft again although its text did not change
        self._run = asyncio.current_task()  # once it is over (cut, failed) nothing is renewed
        self._text = ""
        self._reasoning = ""  # the model's thinking, shown (folded) in the first message while thinking mode is on
        self._refs = [SentRef(chat, message_id) for message_id in sent]
        self._shown: list[Reply | None] = [None] * len(sent)  # not known: the first update edits them
        self._inherited = set(range(len(sent)))  # not edited by this process yet: they may be gone
        self._final = [False] * len(sent)  # whether what each message shows was delivered as final
        self._on_sent = on_sent
        self._last = 0.0
        self._flusher: asyncio.Task[None] | None = None
        self._sending = False

    @property
    def visible(self) -> bool:
        return bool(self._refs)

    def feed(self, delta: str) -> None:
        self._text += delta
        self._kick()

    def show(self, text: str) -> None:
        """Show `text` instead of what was fed so far: a status that changes in place (a background task's)."""
        self._text = text
        self._kick()

    def feed_reasoning(self, delta: str) -> None:
        self._reasoning += delta
        self._kick()

    def _kick(self) -> None:
        if self._flusher is None or self._flusher.done():
            self._flusher = asyncio.create_task(self._flush())

    def _parts(self) -> list[Reply]:
        """The messages the answer needs now; with thinking, every text part keeps the same room for it (and for
        the title, when there is one)."""
        limit = self._d.caps.max_text - (len(self._title) + 2 if self._title else 0)
        thinking = bool(self._reasoning.strip())
        texts = split_text(self._text, limit - (reasoning_room(limit) if thinking else 0)) if self._text.strip() else []
        if thinking or (self._title and self._buttons):
            texts = texts or [""]
        last = len(texts) - 1
        return [Reply(text, self._title if i == 0 else None, self._buttons if i == last else (),
                      reasoning=shown_reasoning(self._reasoning, limit) if i == 0 and thinking else "",
                      feedback=self._feedback if i == last else None)
                for i, text in enumerate(texts)]

    async def _flush(self) -> None:
        # The first text waits only a moment (what the user waits for): an answer that is complete by then goes
        # out once, whole, with no message id to note; later updates wait for the platform's edit interval, so
        # a short answer costs its send and one final edit. When a chat is short of budget, `_show` skips the
        # partial send and the answer goes out whole, in one call.
        interval = self._draft_interval if self._refs and self._refs[-1].draft else self._interval
        wait = self._last + interval - time.monotonic() if self._refs else FIRST_SEND_WAIT
        if wait > 0:
            await asyncio.sleep(wait)
        self._sending = True
        parts = self._parts()
        try:
            for i, part in enumerate(parts):
                if await self._show(i, part, final=i < len(parts) - 1):
                    await self._record()
        finally:
            self._sending = self._renewing = False
            self._last = time.monotonic()
            self._renew_later()

    def _renew_later(self) -> None:
        if self._renewal is not None:
            self._renewal.cancel()
        self._renewal = None
        if self._draft_life is not None and self._refs and self._refs[-1].draft:
            self._renewal = asyncio.get_running_loop().call_later(self._draft_life * RENEW_AT, self._renew)

    def _renew(self) -> None:
        self._renewal = None
        if self._run is None or not self._run.done():
            self._renewing = True
            self._kick()

    async def _show(self, i: int, part: Reply, *, final: bool) -> bool:
        """Show part i; True when that took a new message (a draft that became one too, not a new draft)."""
        if i < len(self._refs):
            ref = self._refs[i]
            # the same text needs no edit, unless the platform shows the stream open until told it is final, or
            # it is a draft (the whole answer must still be sent; or it is old and would vanish)
            closing = final and not self._final[i] and self._d.caps.closes_streams
            if self._shown[i] == part and not closing and not (ref.draft and (final or self._renewing)):
                return False
            shown = await self._d.edit(ref, part, final=final)
            if shown is not None:
                self._refs[i], self._shown[i], self._final[i] = shown, part, final
                self._inherited.discard(i)
                return shown != ref
            if not (final and i in self._inherited):
                return False
            # an earlier process's message that cannot be edited (deleted, too old): the part goes out anew
        if final:
            sent = await self._d.send(self._chat, part)
        else:
            sent = await self._d.send_if_budget(self._chat, part, draft=self._alone,
                                                message=time.monotonic() >= self._partials_from)
        if sent is None:
            return False
        if i < len(self._refs):
            self._inherited.discard(i)
            self._refs[i], self._shown[i], self._final[i] = sent, part, final
        else:
            self._refs.append(sent)
            self._shown.append(part)
            self._final.append(final)
        return not sent.draft

    async def _record(self) -> None:
        """Tell `on_sent` which messages the reply has; a failure to note them is logged, not shown."""
        if self._on_sent is not None:
            try:
                await self._on_sent([ref.message_id for ref in self._refs])
            except Exception:
                log.exception("could not note the messages of a reply in %s", self._chat.chat_id)

    async def finish(self, final_text: str | None = None, buttons: tuple[tuple[Button, ...], ...] = (),
                     feedback: Feedback | None = None) -> None:
        """Deliver the complete answer; what the chat shows equals `final_text` (or everything fed), with the
        thinking fed folded before it and `buttons` and `feedback` under its last part."""
        self._buttons, self._feedback = buttons, feedback
        self._draft_life = None  # the answer is whole now: its message replaces the draft
        if self._renewal is not None:
            self._renewal.cancel()
        if self._flusher is not None and not self._flusher.done():
            if self._sending:  # a request is in flight: let it land so its message id is known
                with contextlib.suppress(Exception):
                    await self._flusher
            else:  # still waiting for its slot: the final update below replaces it
                self._flusher.cancel()
        if final_text is not None:
            self._text = final_text
        parts = self._parts()
        for i, part in enumerate(parts):
            if await self._show(i, part, final=True) and i < len(parts) - 1:
                await self._record()


class HeldReply:
    """Stands in for a StreamWriter when a run may have nothing to say (a heartbeat): nothing shows while the
    model works, and the whole answer is sent at the end unless it is exactly the silent reply."""

    visible = False

    def __init__(self, delivery: Delivery, chat: ChatRef, silent: str) -> None:
        self._d = delivery
        self._chat = chat
        self._silent = silent
        self._text = ""

    def feed(self, delta: str) -> None:
        self._text += delta

    def feed_reasoning(self, delta: str) -> None:
        """Nobody watches a heartbeat think: its thinking stays in the trace."""

    async def finish(self, final_text: str | None = None, feedback: Feedback | None = None) -> None:
        text = self._text if final_text is None else final_text
        if text.strip() and text.strip() != self._silent:
            await self._d.send(self._chat, Reply(text, feedback=feedback))
