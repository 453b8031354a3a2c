"""A claimed job runs in its chat's lane like a message: never interleaved with a running answer, and stored
in the conversation tree as a turn whose messages carry the job's id.

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
from bot.run.turn import TurnContext
from bot.scheduler.clock import Clock
from bot.scheduler.runner import Claim
from bot.scheduler.service import HEARTBEAT_FILE, HEARTBEAT_OK, local_time, zone
from bot.store import Job, Store
from bot.tree.model import Message

log = logging.getLogger("bothub.scheduler")


def heartbeat_prompt(checklist: str) -> str:
    return (f"[heartbeat] Go through this checklist now.\n\n{checklist.strip()}\n\n"
            f"If nothing needs the chat's attention, reply exactly {HEARTBEAT_OK} and nothing else.")


class JobTurns:
    """The scheduler's dispatch: puts each claimed job through its chat's door; every run ends with `finish`."""

    def __init__(self, lanes: Lanes, delivery: Callable[[str], Delivery | None], conversations: Conversations,
                 runner: AgentRunner, store: Store, clock: Clock, workspace: Path, language: str) -> None:
        self.lanes = lanes
        self.delivery = delivery  # the platform's, if it runs in this process
        self.conversations = conversations
        self.runner = runner
        self.store = store
        self.clock = clock
        self.workspace = workspace
        self.language = language  # unless the chat chose its own

    async def __call__(self, claim: Claim) -> None:
        job, where = claim.job, claim.job.where
        delivery = self.delivery(where.platform) if where is not None else None
        if where is None or delivery is None:
            log.warning("job %s has no running platform to post to (%s)", job.id, where)
            await self.store.jobs.finish(job.id, self.clock.now(), "platform not running")
            return
        # with replicas, it runs once this replica owns the chat
        self.lanes.run(SessionKey(where.platform, where.chat_id, where.thread_id),
                       lambda session: self.run(claim, where, session, delivery))

    async def run(self, claim: Claim, where: ChatRef, session: Session, delivery: Delivery) -> None:
        job, result = claim.job, "error"
        session.last_chat = session.last_chat or where
        try:
            await self.conversations.ensure(session)
            lang = session.settings.language or self.language
            if claim.advance.missed:
                when = local_time(job.next_due or self.clock.now(), zone(job.timezone))
                sent = await delivery.send(where, Reply(t(lang, "job_missed", id=job.id, text=job.text, when=when)))
                result = "missed" if sent else "undeliverable"
            elif not job.runs_agent:
                result = await self._post(job, where, session, delivery, lang)
            else:
                result = await self._agent(job, where, session, delivery, lang)
            if delivery.is_gone(where):
                paused = await self.store.jobs.disable_chat(job.chat)
                log.warning("chat %s is unreachable; paused its %d job(s)", job.chat, paused)
                result = "chat unreachable: paused"
        except asyncio.CancelledError:
            result = "stopped"
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

    async def _post(self, job: Job, where: ChatRef, session: Session, delivery: Delivery, lang: str) -> str:
        key = "reminder_for" if where.is_group else "reminder"
        text = t(lang, key, text=job.text, name=job.created_by_name)
        conversations = self.conversations
        conversations.add(session, Message.new("user", f"[scheduled reminder] {job.text}", job_id=str(job.id)))
        conversations.add(session, Message.new("assistant", text, job_id=str(job.id)))
        sent = await delivery.send(where, Reply(text))
        await conversations.flush(session)
        return "sent" if sent else "undeliverable"

    async def _agent(self, job: Job, where: ChatRef, session: Session, delivery: Delivery, lang: str) -> str:
        silent = None
        prompt = f"[scheduled] {job.text}"
        if job.heartbeat:
            checklist = await asyncio.to_thread(_read, self.workspace / HEARTBEAT_FILE)
            if not checklist.strip():
                return f"no {HEARTBEAT_FILE}"
            prompt, silent = heartbeat_prompt(checklist), HEARTBEAT_OK
        before = session.cursor
        turn = TurnContext(where, job.created_by, job.created_by_name, prompt, False, lang,
                           session.conversation_id, str(job.id), silent)
        await self.runner.answer(session, turn, delivery)
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
