"""The hub: gate every inbound message, then run it through the one door (bot/lanes.py) as a command or an
agent turn."""

from __future__ import annotations

import asyncio
import dataclasses
import logging
import re
import uuid
from collections.abc import Awaitable, Callable
from typing import Any, TypeVar

from bot.adapter import Adapter, NotKept
from bot.agent.group_context import GroupContext
from bot.chats.access import Access, Verdict
from bot.chats.links import ChatLinks
from bot.chats.sessions import Session, SessionKey
from bot.commands import COMMANDS, Command, CommandContext, CommandServices, UsageError, parse_command
from bot.config import Config
from bot.delivery import Delivery
from bot.hub.inbox import decode_message, encode_message
from bot.hub.intake import Intake, MediaIntake
from bot.hub.reruns import Reruns
from bot.i18n import t
from bot.messages import ChatRef, InboundEvent, IncomingMessage, Overheard
from bot.ops.metrics import Metrics
from bot.replicas.awaited import answered_elsewhere
from bot.replies import Reply
from bot.run.duel import Duels
from bot.run.replay import Replays
from bot.run.roster import Roster
from bot.run.runner import AgentRunner
from bot.run.turn import Ticket, TurnContext
from bot.store import InboxEntry, Store
from bot.store.claims import NotOwner
from bot.store.inbox import Accepted
from bot.store.tasks import task_of
from bot.tree.model import AttachedFile

log = logging.getLogger("bothub.hub")
_LONE_SURROGATE = re.compile("[\ud800-\udfff]")
Event = TypeVar("Event", IncomingMessage, Overheard)


class Hub:
    def __init__(
        self, cfg: Config, store: Store, services: CommandServices, runner: AgentRunner, metrics: Metrics,
        media: MediaIntake, group_context: GroupContext, roster: Roster | None = None,
    ) -> None:
        self.cfg = cfg
        self.store = store
        self.services = services
        self.conversations = services.conversations
        self.lanes = services.lanes
        self.pairing = services.pairing
        self.runner = runner  # the default agent's
        self.roster = roster  # which agent answers which chat; None: the default agent everywhere
        self.metrics = metrics
        self.media = media
        self.group_context = group_context
        self.access = Access(cfg)
        handoffs = services.handoffs  # a DM linked to another chat is answered in that chat's session
        self.links = handoffs.links if handoffs is not None else ChatLinks(store.handoffs, store.relay)
        self.deliveries: dict[str, Delivery] = {}
        self._accepting = True
        self.scheduled: Callable[[InboxEntry], Awaitable[bool]] | None = None  # routes a job's run (JobTurns)
        self.tasks: Callable[[InboxEntry], Awaitable[bool]] | None = None  # routes a background task (TaskTurns)

    def attach(self, adapter: Adapter) -> None:
        """Each bot account gets its own delivery (its own pacing budget), under its address: the adapter of
        another identity than the platform's default is named `platform@identity` (bot/live/bots.py)."""
        self.deliveries[adapter.name] = Delivery(adapter, lambda: self.lanes.owners.share.replicas)

    def detach(self, name: str) -> None:
        self.deliveries.pop(name, None)

    def delivery(self, reached: str) -> Delivery | None:
        """The delivery of a platform's bot account (`ChatRef.address`), if it runs in this process."""
        return self.deliveries.get(reached)

    async def start(self) -> None:
        """Take part in chat ownership (replicas: before the adapters, whose roles need claims); entries this
        replica pulls from the inbox come back through `_pulled`."""
        await self.links.start()  # before any message is keyed
        await self.lanes.start(self._pulled, lambda: list(self.deliveries),
                               lambda platform: (d := self.deliveries.get(platform)) is not None and d.caps.reorders)

    def language(self, session: Session, runner: AgentRunner | None = None) -> str:
        """The chat's own choice (/lang), else its agent's, else the configured one."""
        agent = (runner or self.runner).agent
        return session.settings.language or (agent.language if agent else None) or self.cfg.language

    def runner_for(self, msg: IncomingMessage) -> AgentRunner:
        """The runner of the agent bound to where this message came from (bot/run/roster.py)."""
        return self.roster.for_chat(msg.chat, msg.user_id) if self.roster is not None else self.runner

    async def handle(self, msg: InboundEvent) -> None:
        """Entry point for adapters; the answer itself runs later, in the session's lane. Raises NotKept only when
        the message could not be stored (the adapter must not acknowledge it); a failure once it is stored is
        logged and swallowed: the entry is kept, and the lane, a sweep or the next start answers it."""
        try:
            if isinstance(msg, Overheard):
                await self._overhear(msg)
            else:
                await self._handle(msg)
        except NotKept:
            log.exception("could not keep %s message %s in %s", msg.platform, msg.message_id, msg.chat_id)
            raise
        except Exception:
            log.exception("could not handle %s message %s in %s", msg.platform, msg.message_id, msg.chat_id)

    async def _overhear(self, heard: Overheard) -> None:
        """Group talk not addressed to the bot: kept as context where this platform keeps it and the bot works
        in this group; never answered, queued or shown as typing, and no inbox entry (nothing to answer)."""
        if not (self._accepting and self.group_context.enabled(heard.platform)
                and self.access.allows_group(heard.platform, heard.chat_id)):
            return
        key = SessionKey.of(heard)
        await self.group_context.keep(key.storage_key, _valid_unicode(heard))

    async def _handle(self, msg: IncomingMessage) -> None:
        msg = _valid_unicode(msg)
        if msg.is_group and not msg.mentioned:
            return
        delivery = self.deliveries.get(msg.address)
        if delivery is None:
            log.error("message from %s, which has no adapter attached", msg.address)
            return
        key = self.links.key_of(msg)

        async def accept() -> Accepted | None:  # None: a redelivery already accepted
            try:
                return await self.store.inbox.accept(f"{key.storage_key}:{msg.message_id}", key.storage_key,
                                                     encode_message(msg), order=msg.order)
            except Exception as e:  # nothing stored: the platform must deliver it again
                raise NotKept(f"the inbox did not take {msg.message_id}: {e!r}") from e

        if not self._accepting:  # shutting down: kept for the chat's next owner (a replica, or this one restarted)
            await accept()  # an adapter still taking events (a poller, a webhook) confirms only what is kept
            return
        await self.lanes.arrive(key, accept, lambda entry: self._dispatch(
            msg, key, Ticket(entry.id, key.storage_key, self.store.inbox, seq=entry.seq), delivery))

    async def _dispatch(self, msg: IncomingMessage, key: SessionKey, ticket: Ticket, delivery: Delivery,
                        pulled: bool = False) -> None:
        """Route an accepted entry on the replica that owns its chat; it leaves the inbox here unless queued."""
        queued = False
        try:
            queued = await self._route(msg, key, ticket, delivery, pulled)
        finally:
            if not queued:  # answered on the spot (or refused): it leaves the inbox now
                await self.store.inbox.finish(key.storage_key, [ticket.entry])

    async def verdict(self, msg: IncomingMessage) -> Verdict:
        """The access rules for this sender in this chat, a completed DM pairing included."""
        verdict = self.access.check(msg)
        if verdict is Verdict.PAIR and await self.pairing.is_paired(msg.platform, msg.user_id):
            return Verdict.ALLOW
        return verdict

    async def _route(self, msg: IncomingMessage, key: SessionKey, ticket: Ticket, delivery: Delivery,
                     pulled: bool = False) -> bool:
        """Answer at once, or queue in the session's lane; True when a lane job now owns the inbox entry.
        A pulled entry (accepted before a restart or on another replica) is never refused as busy."""
        delivery.revive(msg.chat)  # the chat talks to us again: whatever blocked sending is over
        session = self.lanes.session(key)
        session.last_chat = msg.chat
        lang = self.language(session)
        verdict = await self.verdict(msg)
        if verdict is not Verdict.ALLOW:  # admins are always allowed, so they can /pair approve anywhere
            await self._refuse(msg, verdict, delivery, lang)
            return False
        text = msg.text.strip()
        if not text and (not msg.attachments or delivery.adapter.files is None):
            if msg.attachments:  # this platform's adapter takes text only
                await delivery.send(msg.chat, Reply(t(lang, "text_only")))
            return False
        parsed = parse_command(text)
        cmd = COMMANDS.get(parsed[0]) if parsed else None
        if parsed is not None and cmd is None:
            await delivery.send(msg.chat, Reply(t(lang, "unknown_command", name=parsed[0])))
        elif cmd is not None and cmd.immediate:
            await self._run_command(cmd, msg, session, parsed[1] if parsed else "", delivery)
        elif self.lanes.queued(key) >= self.cfg.max_queue and not pulled:
            await delivery.send(msg.chat, Reply(t(lang, "busy")))
        else:
            self._enqueue(key, ticket, msg, delivery, resumed=pulled)
            return True
        return False

    def _enqueue(self, key: SessionKey, ticket: Ticket, msg: IncomingMessage, delivery: Delivery,
                 resumed: bool = False) -> None:
        """Queue a command or an answer; the inbox entry is finished when it is done, or dropped by /stop,
        and left for the next start when shutdown cuts it."""
        parsed = parse_command(msg.text.strip())
        cmd = COMMANDS.get(parsed[0]) if parsed else None

        async def work(session: Session) -> None:
            if cmd is not None and parsed is not None:
                await self._run_command(cmd, msg, session, parsed[1], delivery)
            else:
                await self._answer(msg, session, delivery, ticket, resumed)

        self.lanes.answer(key, ticket.entry, work, lambda: ticket.finished, ticket.seq)  # stored with its finish

    async def resume(self) -> int:
        """Queue what an earlier process accepted and did not finish (a crash, a restart); returns how many.
        With replicas, the ownership sweep takes over chats with waiting entries instead."""
        if self.lanes.shared:
            return 0
        resumed = 0
        for entry in await self.store.inbox.unfinished():
            resumed += await self._pulled(entry, inherited=True)
        return resumed

    async def _pulled(self, entry: InboxEntry, inherited: bool = False) -> bool:
        """Route an entry accepted earlier or elsewhere; False when its platform does not run here. An entry left
        by an earlier process (`inherited`, or its reply begun elsewhere) starts its chat with no burst: the
        platform counted what that process sent there a moment ago, which this one's pacing never saw."""
        if entry.job is not None:
            return self.scheduled is not None and await self.scheduled(entry)
        if task_of(entry.event) is not None:
            return self.tasks is not None and await self.tasks(entry)
        msg = decode_message(entry.event)
        delivery = self.deliveries.get(msg.address)
        if delivery is None:
            return False  # its platform does not run in this process: the entry waits for one that does
        ticket = Ticket(entry.id, entry.session, self.store.inbox, entry.replies, entry.seq or None)
        if inherited or entry.replies:
            delivery.pacer.penalize(msg.chat, 0.0)
        await self._dispatch(msg, SessionKey.parse(entry.session), ticket, delivery, pulled=True)
        return True

    async def _answer(self, msg: IncomingMessage, session: Session, delivery: Delivery, ticket: Ticket,
                      resumed: bool = False) -> None:
        runner = self.runner_for(msg)
        try:
            await runner.load(session)
            intake = Intake(msg.text.strip())  # what the user said and sent, once the files are taken
            transfer = delivery.adapter.files
            if msg.attachments and transfer is not None:
                intake = await self.media.take(msg, runner.workdir(session), transfer, self.language(session, runner))
                for notice in intake.notices:
                    await delivery.send(msg.chat, Reply(notice))
                if not intake.text and not intake.files:
                    return
            answer = runner.resume if resumed else runner.answer
            await answer(session, self.turn(msg, session, intake.text, intake.files, ticket, runner), delivery)
        except NotOwner:
            raise  # fenced off: another replica answers it (bot/lanes.py abandons the run, no reply)
        except Exception:
            await self._internal_error(msg, delivery, self.language(session, runner))

    def turn(self, msg: IncomingMessage, session: Session, text: str, files: tuple[AttachedFile, ...] = (),
             ticket: Ticket | None = None, runner: AgentRunner | None = None) -> TurnContext:
        agent = (runner or self.runner).agent
        is_admin = self.access.is_admin(msg) or (agent is not None and msg.user_id in agent.admins)
        return TurnContext(msg.chat, msg.user_id, msg.user_name, text, is_admin, self.language(session, runner),
                           files=files, ticket=ticket)

    async def _run_command(
        self, cmd: Command, msg: IncomingMessage, session: Session, args: str, delivery: Delivery
    ) -> None:
        lang = self.language(session)
        try:
            await self.conversations.ensure(session)
            lang = self.language(session)
            is_admin = self.access.is_admin(msg)
            if (cmd.admin_only and not is_admin) or (cmd.navigation and not self.access.may_navigate(msg)):
                reply: Reply | None = Reply(t(lang, "admins_only"))
            else:
                runner = self.runner_for(msg)
                reruns = Reruns(runner, Duels(runner, self.store.votes, self.roster), Replays(runner), session,
                                lambda text: self.turn(msg, session, text, runner=runner), delivery)
                ctx = CommandContext(self._services_of(runner), msg, session, args, lang, is_admin, delivery.caps,
                                     reruns)
                try:
                    reply = await cmd.func(ctx)
                except UsageError as e:
                    reply = Reply(str(e) or t(lang, "usage", usage=cmd.usage))
            if reply is not None:
                await delivery.send(msg.chat, reply)
        except (asyncio.CancelledError, NotOwner):
            raise
        except Exception:
            await self._internal_error(msg, delivery, lang)

    def _services_of(self, runner: AgentRunner) -> CommandServices:
        """What commands see for this agent: its workspace (/new reloads it, /role lists its roles) and its tools."""
        prompts, tools = runner.assembly.prompts, runner.loop.tools
        if prompts is self.services.prompts and tools is self.services.tools:
            return self.services
        return dataclasses.replace(self.services, prompts=prompts, tools=tools)

    async def _refuse(self, msg: IncomingMessage, verdict: Verdict, delivery: Delivery, lang: str) -> None:
        if verdict is Verdict.PAIR:
            code = await self.pairing.code_for(msg.platform, msg.user_id)
            await delivery.send(msg.chat, Reply(t(lang, "pairing", code=code)))
        elif not msg.is_group or msg.is_button or msg.text.lstrip().startswith("/"):
            # a plain mention in a group that is not allowed gets silence; an explicit command or a
            # button press gets its one line (so an interaction the platform waits on is answered)
            await delivery.send(msg.chat, Reply(t(lang, "not_allowed")))

    async def _internal_error(self, msg: IncomingMessage, delivery: Delivery, lang: str) -> None:
        error_id = uuid.uuid4().hex[:8]
        log.exception("error %s in %s chat %s", error_id, msg.platform, msg.chat_id)
        self.metrics.error("internal")
        await delivery.send(msg.chat, Reply(t(lang, "internal_error", error_id=error_id)))

    async def answered(self, chat: ChatRef) -> None:
        """Returns once everything this chat has sent so far is answered: its lane here is empty and idle, or,
        when another replica owns the chat, its inbox entries are finished there."""
        key = self.links.key_at(chat)
        relay = self.store.relay
        if relay is None or self.lanes.owners.claims.holds(key.storage_key):
            await self.lanes.answered(key)
        else:
            await answered_elsewhere(relay, self.store.inbox, key.storage_key)

    async def idle(self) -> None:
        """Wait until every chat's lane is empty (e.g. piped console input fully answered)."""
        await self.lanes.idle()

    async def shutdown(self, grace: float) -> None:
        """Stop intake, let runs finish for `grace` seconds, then cut what is left (it stays in the inbox)."""
        self._accepting = False
        self.links.stop()
        await self.lanes.shutdown(grace)


def _valid_unicode(msg: Event) -> Event:
    """Platform JSON may carry lone surrogates, which can be neither stored nor sent: make them U+FFFD once."""
    fixed: dict[str, Any] = {f.name: _LONE_SURROGATE.sub("\ufffd", value) for f in dataclasses.fields(msg)
             if isinstance(value := getattr(msg, f.name), str) and _LONE_SURROGATE.search(value)}
    return dataclasses.replace(msg, **fixed) if fixed else msg
