"""Getting replies onto a platform: paced, retried on 429, split at the limit; a chat that is gone is not tried."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections import OrderedDict
from collections.abc import Callable

from bot.adapter import Adapter, ChatUnavailable, DraftsRefused, OutgoingFile, RateLimited, SendError, SendFailed
from bot.delivery.drafts import DraftRules
from bot.delivery.pacing import Pacer, alone
from bot.httpkit.fence import still_owner
from bot.messages import ButtonPress, ChatRef, SentRef
from bot.replies import Reply, split_reply

log = logging.getLogger("bothub.delivery")
MAX_ATTEMPTS = 5
REMEMBERED_PRESSES = 2048
TYPING_EVERY = 4.5  # seconds; platforms show "typing…" for about 5 s per call


class Delivery:
    """One per adapter: owns pacing, retries and the 'chat is gone' list, so adapters stay thin."""

    def __init__(self, adapter: Adapter, replicas: Callable[[], int] = alone) -> None:
        self.adapter = adapter
        self.caps = adapter.capabilities
        self.pacer = Pacer(self.caps, replicas)  # `replicas`: how many live replicas share the platform's budget
        self._gone: set[tuple[str, str | None]] = set()
        self.drafts = DraftRules(adapter)
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
        ref: SentRef | None = None
        for piece in split_reply(reply, self.caps.max_text):
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
                await still_owner()
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

    async def edit(self, ref: SentRef, reply: Reply, *, final: bool) -> SentRef | None:
        """Edit a sent message; what shows it now (a draft's final is the message it became), None if not shown.
        Intermediate edits are dropped when the chat has no budget; finals wait."""
        if ref.draft:
            if final:  # the whole answer goes out as the message, which replaces the draft in the chat
                return await self._call(ref.chat, reply, None, final=True)
            with contextlib.suppress(DraftsRefused):  # remembered: this answer's draft stays as it is
                return await self._draft(ref.chat, reply, ref)
            return None
        if final:
            return await self._call(ref.chat, reply, ref, final=True)
        return await self._once(ref.chat, reply, ref)

    async def send_if_budget(self, chat: ChatRef, reply: Reply, *, draft: bool = False,
                             message: bool = True) -> SentRef | None:
        """An intermediate stream update as a new message: only if the chat has budget to spare, never retried.
        `draft`: in a chat that shows drafts, a draft instead, outside the budget (one stream in the chat at a time:
        the platform shows one draft, so streams side by side are messages). `message`: whether a partial answer
        may take a message at all (not in a chat that was busy when the answer began, Pacer.busy)."""
        if draft and self.drafts.wanted(chat) and self._unanswered_press(chat) is None:
            with contextlib.suppress(DraftsRefused):  # remembered: the partial answer goes as a message
                return await self._draft(chat, reply, None)
        return await self._once(chat, reply, None) if message else None

    async def _draft(self, chat: ChatRef, reply: Reply, ref: SentRef | None) -> SentRef | None:
        """A partial answer as the platform's draft: no pacer slot (it costs no message budget); a 429 holds the
        chat's drafts as long as asked, and the message that ends the answer waits as long."""
        if self.is_gone(chat) or self.drafts.held(chat) or not self.drafts.wanted(chat):
            return None  # refused while an answer drafted: its draft stays as it is until its message
        drafter = self.drafts.drafter
        assert drafter is not None  # drafts are wanted only from a Drafting adapter
        try:
            await still_owner()
            return await drafter.draft(chat, reply, ref)
        except DraftsRefused as e:
            log.info("drafts refused in %s (%s); partial answers go as messages", chat.chat_id, e)
            self.drafts.refused(chat, e.everywhere)
            raise
        except RateLimited as e:
            self.drafts.hold(chat, e.retry_after)
            self.pacer.penalize(chat, e.retry_after)
        except ChatUnavailable:
            self._mark_gone(chat)
        except SendError as e:
            log.warning("draft in %s failed: %s", chat.chat_id, e)
        return None

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
        if ref is None:  # a partial message not sent: no final edit to keep room for
            self.pacer.withdraw(chat)
        return None

    async def _platform_call(self, chat: ChatRef, reply: Reply, ref: SentRef | None, *, final: bool) -> SentRef:
        await still_owner()
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
