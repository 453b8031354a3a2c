"""A job's run, queued in the inbox by the scheduler, runs in its chat's lane like a message: never
interleaved with a running answer, answered by the chat's owner (the next owner if that replica dies first),
and stored in the conversation tree as a turn whose messages carry the job's id.

Jobs run without a person present, so they never get admin rights (no shell approvals on someone's behalf).
A chat the platform says is gone (bot blocked or removed) gets all its jobs paused instead of retried.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable
from pathlib import Path

from bot.chats.conversations import Conversations
from bot.chats.sessions import Session, SessionKey
from bot.delivery import Delivery
from bot.i18n import t
from bot.lanes import Lanes
from bot.messages import ChatRef
from bot.replies import Reply
from bot.run.runner import AgentRunner
from bot.run.turn import Ticket, TurnContext
from bot.scheduler.clock import Clock
from bot.scheduler.runner import Claim, read_run
from bot.scheduler.service import HEARTBEAT_FILE, HEARTBEAT_OK, local_time, zone
from bot.store import InboxEntry, Job, Store
from bot.store.claims import NotOwner
from bot.store.inbox import Accepted
from bot.tree.model import Message

log = logging.getLogger("bothub.scheduler")


def heartbeat_prompt(checklist: str) -> str:
    return (f"[heartbeat] Go through this checklist now.\n\n{checklist.strip()}\n\n"
            f"If nothing needs the chat's attention, reply exactly {HEARTBEAT_OK} and nothing else.")


class JobTurns:
    """The scheduler's dispatch: puts each claimed job through its chat's door; every run ends with `finish`."""

    def __init__(self, lanes: Lanes, delivery: Callable[[str], Delivery | None], conversations: Conversations,
                 runner: Callable[[ChatRef, str], AgentRunner], store: Store, clock: Clock, language: str) -> None:
        self.lanes = lanes
        self.delivery = delivery  # the platform's, if it runs in this process
        self.conversations = conversations
        self.runner = runner  # (chat, user id) → the runner of the agent bound there
        self.store = store
        self.clock = clock
        self.language = language  # unless the chat chose its own

    async def __call__(self, claim: Claim) -> None:
        """A run the scheduler just queued: through the chat's door like an arriving message (its entry is in
        the inbox already), so the chat's owner runs it."""
        where = claim.job.where
        if where is None or self.delivery(where.address) is None:
            await self._unrunnable(claim)
            return

        async def accepted() -> Accepted:
            return Accepted(claim.entry, None)  # queued with its job's next due time

        ticket = Ticket(claim.entry, claim.job.chat, self.store.inbox)
        await self.lanes.arrive(SessionKey.parse(claim.job.chat), accepted,
                                lambda _entry: self._queue(claim, ticket, resumed=False))

    async def pulled(self, entry: InboxEntry) -> bool:
        """A run queued earlier or on another replica (its owner died, or a restart): answered here."""
        job = next((j for j in await self.store.jobs.for_chat(entry.session) if j.id == entry.job), None)
        if job is None:  # deleted while its run waited: nothing to run
            await self.store.inbox.finish(entry.session, [entry.id])
            return True
        job, missed = read_run(job, entry.event)
        ticket = Ticket(entry.id, entry.session, self.store.inbox, entry.replies, entry.seq or None)
        await self._queue(Claim(job, missed, entry.id), ticket, resumed=True)
        return True

    async def _queue(self, claim: Claim, ticket: Ticket, resumed: bool) -> None:
        where = claim.job.where
        delivery = self.delivery(where.address) if where is not None else None
        if where is None or delivery is None:
            await self._unrunnable(claim)
            return
        self.lanes.answer(SessionKey.parse(claim.job.chat), ticket.entry,
                          lambda session: self.run(claim, where, session, delivery, ticket, resumed),
                          lambda: ticket.finished, ticket.seq)

    async def _unrunnable(self, claim: Claim) -> None:
        log.warning("job %s has no running platform to post to (%s)", claim.job.id, claim.job.where)
        try:
            await self.store.inbox.finish(claim.job.chat, [claim.entry])
        except NotOwner:
            return  # another replica owns the chat: the run is its to record
        await self.store.jobs.finish(claim.job.id, self.clock.now(), "platform not running")

    async def run(self, claim: Claim, where: ChatRef, session: Session, delivery: Delivery, ticket: Ticket,
                  resumed: bool = False) -> None:
        job, result = claim.job, "error"
        session.last_chat = session.last_chat or where
        try:
            await self.conversations.ensure(session)
            lang = session.settings.language or self.language
            if claim.missed:
                when = local_time(job.next_due or self.clock.now(), zone(job.timezone))
                sent = await delivery.send(where, Reply(t(lang, "job_missed", id=job.id, text=job.text, when=when)))
                result = "missed" if sent else "undeliverable"
            elif not job.runs_agent:
                result = await self._post(job, where, session, delivery, lang, ticket)
            else:
                result = await self._agent(job, where, session, delivery, lang, ticket, resumed)
            if delivery.is_gone(where):
                paused = await self.store.jobs.disable_chat(job.chat)
                log.warning("chat %s is unreachable; paused its %d job(s)", job.chat, paused)
                result = "chat unreachable: paused"
        except asyncio.CancelledError:
            result = "stopped"
            raise
        except NotOwner:
            result = "taken over"  # fenced off: the chat's new owner runs it
            raise
        except Exception:
            log.exception("job %s in %s failed", job.id, job.chat)
        finally:
            await asyncio.shield(self._finish(job, result))

    async def _finish(self, job: Job, result: str) -> None:
        try:
            await self.store.jobs.finish(job.id, self.clock.now(), result)
        except Exception:
            log.exception("could not record the result of job %s", job.id)

    async def _post(self, job: Job, where: ChatRef, session: Session, delivery: Delivery, lang: str,
                    ticket: Ticket) -> str:
        key = "reminder_for" if where.is_group else "reminder"
        text = t(lang, key, text=job.text, name=job.created_by_name)
        conversations = self.conversations
        conversations.add(session, Message.new("user", f"[scheduled reminder] {job.text}", job_id=str(job.id)))
        stored = asyncio.get_running_loop().create_future()  # the reminder's write finishes its entry, once sent
        conversations.add(session, Message.new("assistant", text, job_id=str(job.id)), stored)
        done = False
        try:
            sent = await delivery.send(where, Reply(text))
            done = True
        finally:
            stored.set_result(ticket.entry if done else None)
        await conversations.flush(session)
        ticket.finished = True
        return "sent" if sent else "undeliverable"

    async def _agent(self, job: Job, where: ChatRef, session: Session, delivery: Delivery, lang: str,
                     ticket: Ticket, resumed: bool) -> str:
        silent = None
        prompt = f"[scheduled] {job.text}"
        runner = self.runner(where, job.created_by)
        if job.heartbeat:  # the checklist of the agent that answers there
            checklist = await asyncio.to_thread(_read, runner.assembly.prompts.workspace / HEARTBEAT_FILE)
            if not checklist.strip():
                return f"no {HEARTBEAT_FILE}"
            prompt, silent = heartbeat_prompt(checklist), HEARTBEAT_OK
        before = session.cursor
        turn = TurnContext(where, job.created_by, job.created_by_name, prompt, False, lang,
                           session.conversation_id, str(job.id), silent, ticket=ticket)
        answer = runner.resume if resumed else runner.answer  # taken over: maybe stored already
        await answer(session, turn, delivery)
        last = session.path[-1] if session.path else None
        if last is None or last.role != "assistant" or last.job_id != str(job.id):
            return "failed"
        if silent is not None and last.content.strip() == silent and before is not None:
            # nothing to say: the turn stays in the tree as a side branch, the conversation goes on as before
            await self.conversations.move_cursor(session, before)
            return "ok (silent)"
        return "answered"


def _read(path: Path) -> str:
    try:
        return path.read_text(encoding="utf-8")
    except (FileNotFoundError, UnicodeDecodeError):
        return ""
