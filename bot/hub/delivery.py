"""Getting replies onto a platform: paced, retried on 429, split at the limit, streamed by coalesced edits."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections import OrderedDict
from collections.abc import Awaitable, Callable, Sequence

from bot.adapter import Adapter, ChatUnavailable, OutgoingFile, RateLimited, SendError, SendFailed
from bot.hub.pacing import Pacer
from bot.messages import ButtonPress, ChatRef, SentRef
from bot.replies import Reply, split_text

log = logging.getLogger("bothub.delivery")
FIRST_SEND_WAIT = 0.02  # seconds: an answer that arrives in one piece (a quick model) is sent once

MAX_ATTEMPTS = 5
REMEMBERED_PRESSES = 2048
TYPING_EVERY = 4.5  # seconds; platforms show "typing…" for about 5 s per call


class Delivery:
    """One per adapter: owns pacing, retries and the 'chat is gone' list, so adapters stay thin."""

    def __init__(self, adapter: Adapter) -> None:
        self.adapter = adapter
        self.caps = adapter.capabilities
        self.pacer = Pacer(self.caps)
        self._gone: set[tuple[str, str | None]] = set()
        self._answered_presses: OrderedDict[str, None] = OrderedDict()  # presses whose message was replaced
        self._typed: OrderedDict[tuple[str, str | None], float] = OrderedDict()  # chat → last "typing…", oldest first

    def revive(self, chat: ChatRef) -> None:
        self._gone.discard((chat.chat_id, chat.thread_id))

    def is_gone(self, chat: ChatRef) -> bool:
        return (chat.chat_id, chat.thread_id) in self._gone

    async def typing(self, chat: ChatRef) -> None:
        """"typing…" at most once per TYPING_EVERY in a chat, across runs: a chat answered back to back would
        otherwise spend a platform call on every answer (one platform allows 5 typing calls per 5 s per channel)."""
        key, now = (chat.chat_id, chat.thread_id), time.monotonic()
        last = self._typed.get(key)
        if last is not None and now - last < TYPING_EVERY:
            return
        self._typed.pop(key, None)
        self._typed[key] = now
        while now - next(iter(self._typed.values())) >= TYPING_EVERY:  # only chats typed at in the last seconds
            self._typed.popitem(last=False)
        await self.adapter.typing(chat)

    async def send(self, chat: ChatRef, reply: Reply) -> SentRef | None:
        """Send a whole reply (split if long); waits for budget and retries 429s. None if undeliverable."""
        parts = split_text(reply.text, self.caps.max_text) or [""]
        ref: SentRef | None = None
        for i, part in enumerate(parts):
            last = i == len(parts) - 1
            title = reply.title if i == 0 else None
            piece = Reply(part, title, reply.buttons if last else (), reply.monospace)
            ref = await self._call(chat, piece, None, final=True)
            if ref is None:
                return None
        return ref

    async def send_file(self, chat: ChatRef, file: OutgoingFile) -> str:
        """Post a file, paced and retried like text; answers what the model should hear."""
        transfer = self.adapter.files
        if transfer is None:
            return "Error: this platform takes text only; describe the file instead"
        size = len(file.data)
        if size > transfer.max_upload:
            return f"Error: {file.name} is {size} bytes; this platform takes files up to {transfer.max_upload} bytes"
        for _ in range(MAX_ATTEMPTS):
            if self.is_gone(chat):
                return "Error: this chat can no longer be reached"
            slot = await self.pacer.take(chat, new_message=True)
            try:
                await transfer.upload(chat, file)
                return f"Sent {file.name} to the chat."
            except RateLimited as e:
                self.pacer.penalize(chat, e.retry_after)
                wait = e.retry_after
            except ChatUnavailable:
                self._mark_gone(chat)
                return "Error: this chat can no longer be reached"
            except SendError as e:
                return f"Error: the platform refused {file.name}: {e}"
            finally:
                slot.release()
            await asyncio.sleep(wait)
        return f"Error: {file.name} could not be sent (the platform kept asking to wait)"

    async def edit(self, ref: SentRef, reply: Reply, *, final: bool) -> bool:
        """Edit a sent message. Intermediate edits are dropped when the chat has no budget; finals wait."""
        if final:
            return await self._call(ref.chat, reply, ref, final=True) is not None
        return await self._once(ref.chat, reply, ref) is not None

    async def send_if_budget(self, chat: ChatRef, reply: Reply) -> SentRef | None:
        """An intermediate stream update as a new message: only if the chat has budget to spare, never retried."""
        return await self._once(chat, reply, None)

    async def _once(self, chat: ChatRef, reply: Reply, ref: SentRef | None) -> SentRef | None:
        slot = None if self.is_gone(chat) else self.pacer.try_take(chat, new_message=ref is None)
        if slot is None:
            return None
        try:
            return await self._platform_call(chat, reply, ref, final=False)
        except RateLimited as e:
            self.pacer.penalize(chat, e.retry_after)
        except ChatUnavailable:
            self._mark_gone(chat)
        except SendError as e:
            log.warning("stream update in %s failed: %s", chat.chat_id, e)
        finally:
            slot.release()
        return None

    async def _platform_call(self, chat: ChatRef, reply: Reply, ref: SentRef | None, *, final: bool) -> SentRef:
        press = self._unanswered_press(chat) if ref is None else None
        if press is not None and press.message_id is not None:
            try:  # a rate limit propagates unanswered: the retry replaces the pressed message again
                await self.adapter.edit(SentRef(chat, press.message_id), reply, final=final)
            except SendFailed as e:  # too old to edit, or not ours: answer in a new message
                log.info("pressed message %s not replaced (%s); sending anew", press.message_id, e)
                self._answered(press)
            else:
                self._answered(press)
                return SentRef(chat, press.message_id)
        if ref is None:
            return await self.adapter.send(chat, reply, final=final)
        await self.adapter.edit(ref, reply, final=final)
        return ref

    def _unanswered_press(self, chat: ChatRef) -> ButtonPress | None:
        """The first reply to a button press replaces the pressed message, where the platform allows."""
        press = chat.origin
        if not (isinstance(press, ButtonPress) and press.message_id and self.caps.replace_pressed):
            return None
        return None if press.press_id in self._answered_presses else press

    def _answered(self, press: ButtonPress) -> None:
        self._answered_presses[press.press_id] = None
        while len(self._answered_presses) > REMEMBERED_PRESSES:
            self._answered_presses.popitem(last=False)

    async def _call(self, chat: ChatRef, reply: Reply, ref: SentRef | None, *, final: bool) -> SentRef | None:
        for _ in range(MAX_ATTEMPTS):
            if self.is_gone(chat):
                return None
            slot = await self.pacer.take(chat, new_message=ref is None)
            try:
                return await self._platform_call(chat, reply, ref, final=final)
            except RateLimited as e:
                self.pacer.penalize(chat, e.retry_after)
                wait = e.retry_after
            except ChatUnavailable:
                self._mark_gone(chat)
                return None
            except SendError as e:
                log.warning("send to %s failed: %s", chat.chat_id, e)
                wait = 0.5
            finally:
                slot.release()
            await asyncio.sleep(wait)
        log.error("giving up delivering to %s after %d attempts", chat.chat_id, MAX_ATTEMPTS)
        return None

    def _mark_gone(self, chat: ChatRef) -> None:
        key = (chat.chat_id, chat.thread_id)
        if key not in self._gone:
            self._gone.add(key)
            log.warning("chat %s is unavailable (blocked, kicked or no permission); not sending there", key)


class StreamWriter:
    """Shows a growing answer: first text at once, then edits no faster than the platform allows.

    Only the newest text matters, so intermediate edits coalesce and are skipped when the chat has no
    budget; `finish` always delivers the complete answer, continuing in new messages past the limit.
    A part that is not the last one no longer changes (`split_text` cuts by a prefix), so it is
    finalized as soon as the answer outgrows it.

    `sent` are messages an earlier process sent for this reply: they are edited, not sent again. `on_sent`
    learns the ids whenever a message is added, except the last part of `finish` (what follows it is the
    answer's own write, which ends the reply's life in the inbox).
    """

    def __init__(self, delivery: Delivery, chat: ChatRef, sent: Sequence[str] = (),
                 on_sent: Callable[[list[str]], Awaitable[None]] | None = None) -> None:
        self._d = delivery
        self._chat = chat
        caps = delivery.caps
        self._interval = caps.group_edit_interval if chat.is_group else caps.edit_interval
        self._text = ""
        self._refs = [SentRef(chat, message_id) for message_id in sent]
        self._shown = [""] * len(sent)  # what they show is not known: the first update edits them
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
        if self._flusher is None or self._flusher.done():
            self._flusher = asyncio.create_task(self._flush())

    async def _flush(self) -> None:
        # The first text waits only a moment (what the user waits for): an answer that is complete by then goes
        # out once, whole, with no message id to note; later updates wait for the platform's edit interval, so
        # a short answer costs its send and one final edit. When a chat is short of budget, `_show` skips the
        # partial send and the answer goes out whole, in one call.
        wait = self._last + self._interval - time.monotonic() if self._refs else FIRST_SEND_WAIT
        if wait > 0:
            await asyncio.sleep(wait)
        self._sending = True
        parts = split_text(self._text, self._d.caps.max_text) if self._text.strip() else []
        try:
            for i, part in enumerate(parts):
                if await self._show(i, part, final=i < len(parts) - 1):
                    await self._record()
        finally:
            self._sending = False
            self._last = time.monotonic()

    async def _show(self, i: int, part: str, *, final: bool) -> bool:
        """Show part i; True when that took a new message."""
        if i < len(self._refs):
            # the same text needs no edit, unless the platform shows the stream open until told it is final
            closing = final and not self._final[i] and self._d.caps.closes_streams
            if self._shown[i] == part and not closing:
                return False
            if await self._d.edit(self._refs[i], Reply(part), final=final):
                self._shown[i], self._final[i] = part, final
                self._inherited.discard(i)
                return False
            if not (final and i in self._inherited):
                return False
            # an earlier process's message that cannot be edited (deleted, too old): the part goes out anew
        ref = await (self._d.send if final else self._d.send_if_budget)(self._chat, Reply(part))
        if ref is None:
            return False
        if i < len(self._refs):
            self._inherited.discard(i)
            self._refs[i], self._shown[i], self._final[i] = ref, part, final
        else:
            self._refs.append(ref)
            self._shown.append(part)
            self._final.append(final)
        return True

    async def _record(self) -> None:
        """Tell `on_sent` which messages the reply has; a failure to note them is logged, not shown."""
        if self._on_sent is not None:
            try:
                await self._on_sent([ref.message_id for ref in self._refs])
            except Exception:
                log.exception("could not note the messages of a reply in %s", self._chat.chat_id)

    async def finish(self, final_text: str | None = None) -> None:
        """Deliver the complete answer; what the chat shows equals `final_text` (or everything fed)."""
        if self._flusher is not None and not self._flusher.done():
            if self._sending:  # a request is in flight: let it land so its message id is known
                with contextlib.suppress(Exception):
                    await self._flusher
            else:  # still waiting for its slot: the final update below replaces it
                self._flusher.cancel()
        if final_text is not None:
            self._text = final_text
        parts = split_text(self._text, self._d.caps.max_text) if self._text.strip() else []
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

    async def finish(self, final_text: str | None = None) -> None:
        text = self._text if final_text is None else final_text
        if text.strip() and text.strip() != self._silent:
            await self._d.send(self._chat, Reply(text))
