"""Background tasks through the door: started by `delegate` or /task, run beside the chat, posted back into it.

Starting a task stores it and queues an inbox entry of its chat (bot/store/tasks.py), which goes through
`Lanes.arrive` like an arriving message: the chat's owner routes it (after a restart, or a replica's death, the
next owner). Routed, the entry does what the task's state says: a running task runs `aside` (bot/lanes.py) —
beside the chat's lane, so the chat goes on answering while its tasks work and a parent never waits holding the
lane — and, once it has ended, a short piece of work enters the chat's own lane to post the result into the
conversation that started it (whichever one the chat is on by then) and finish the entry. /cancel marks the
task cancelled and cuts its run: commands run on the chat's owner, which is where its tasks run; an entry routed
later finds the mark.
"""

from __future__ import annotations

import asyncio
import dataclasses
import logging
import uuid
from collections.abc import Callable

from bot.agent.tools.delegate import Delegation
from bot.agent.tools.registry import ToolContext
from bot.chats.conversations import Conversations
from bot.chats.sessions import Session, SessionKey
from bot.commands.models import choosable
from bot.delivery import Delivery, StreamWriter
from bot.i18n import t
from bot.lanes import Lanes
from bot.llmconfig import LLMConfig
from bot.messages import ChatRef
from bot.replies import Reply
from bot.run.runner import AgentRunner
from bot.run.task import Progress, SubAgent
from bot.run.turn import Ticket
from bot.store import InboxEntry, Store
from bot.store.claims import NotOwner
from bot.store.inbox import Accepted
from bot.store.tasks import NewTask, Task, TaskState, TooManyTasks, task_of
from bot.tree.model import Message

log = logging.getLogger("bothub.tasks")


class TaskTurns:
    def __init__(self, lanes: Lanes, delivery: Callable[[str], Delivery | None], conversations: Conversations,
                 runner: Callable[[ChatRef, str], AgentRunner], store: Store, llm: LLMConfig, limit: int) -> None:
        self.lanes = lanes
        self.delivery = delivery  # the platform's, if it runs in this process
        self.conversations = conversations
        self.runner = runner  # (chat, user id) → the runner of the agent bound there
        self.store = store
        self.llm = llm
        self.limit = limit  # tasks running at once per chat (`max_tasks`)
        self._cancelling: set[tuple[str, int]] = set()

    async def start(self, spec: NewTask) -> Task:
        """Store the task and route its run through the chat's door; TooManyTasks at the chat's limit."""
        started: list[Task] = []

        async def accept() -> Accepted:
            task, entry = await self.store.tasks.start(spec, self.limit)
            started.append(task)
            return Accepted(entry, None)

        await self.lanes.arrive(SessionKey.parse(spec.chat), accept, lambda entry: self._go(started[0], entry.id))
        return started[0]

    async def delegated(self, ctx: ToolContext, d: Delegation) -> str:
        """The `delegate` tool: what the model hears back (errors in words it can pass on)."""
        if ctx.where is None or ctx.conversation_id is None or ctx.anchor is None:
            return "Error: background tasks need a chat and a conversation to post their result in."
        runner = self.runner(ctx.where, ctx.user_id)
        roles = runner.assembly.prompts.roles()
        if d.role and d.role not in roles:
            return f"Error: there is no role {d.role!r}; the workspace has: {', '.join(roles) or 'none'}."
        models = [self.llm.chat_model, *choosable(self.llm)]
        if d.model and d.model not in models:
            return f"Error: the model {d.model!r} may not be chosen; allowed: {', '.join(models)}."
        parent = await ctx.anchor()
        assert parent is not None
        spec = NewTask(ctx.chat, ctx.conversation_id, parent, d.prompt, ctx.where, ctx.user_id, ctx.user_name,
                       ctx.lang, d.role, d.model, d.tools)
        try:
            task = await self.start(spec)
        except TooManyTasks:
            return (f"Error: this chat already has {self.limit} background tasks running, the most it may; tell the "
                    "user to wait for one or to stop one with /cancel.")
        return (f"Started background task {task.label}. Its progress shows in the chat and its result will be posted "
                "in this conversation when it is done: tell the user so in a sentence, and do not wait for it.")

    async def recent(self, chat: str) -> list[Task]:
        return await self.store.tasks.recent(chat)

    async def cancel(self, chat: str, task_id: int) -> Task | None:
        """Mark the chat's task cancelled and cut its run here; the task as it was (None: no such task)."""
        task = await self.store.tasks.get(chat, task_id)
        if task is None or task.state != "running":
            return task
        self._cancelling.add((chat, task_id))
        await self.store.tasks.end(chat, task_id, "cancelled")
        if not await self.lanes.cancel_aside(_name(task)):
            self._cancelling.discard((chat, task_id))  # not running here now: its entry, routed, finds the mark
        return task

    async def pulled(self, entry: InboxEntry) -> bool:
        """A task's entry routed here (a restart, a takeover, a wake-up); False when its platform is not here."""
        task_id = task_of(entry.event)
        task = await self.store.tasks.get(entry.session, task_id) if task_id is not None else None
        if task is None:  # forgotten meanwhile: nothing to do
            await self.store.inbox.finish(entry.session, [entry.id])
            return True
        if self.delivery(task.spec.where.address) is None:
            return False
        await self._go(task, entry.id)
        return True

    async def _go(self, task: Task, entry: int) -> None:
        """What the task's state asks for: run it, post its result, or, cancelled, say so and let it go."""
        key, delivery = SessionKey.parse(task.spec.chat), self.delivery(task.spec.where.address)
        if delivery is None:
            log.warning("task %s in %s has no running platform to post to", task.label, task.spec.chat)
        elif task.state == "running":
            self.lanes.aside(key, _name(task), lambda: self._run(task, entry, delivery))
        elif task.state in ("done", "failed"):
            self._post_later(task, entry, delivery)
        else:
            await Progress(self._stream(task, delivery), task).end("cancelled")
            await self.store.inbox.finish(task.spec.chat, [entry])

    def _stream(self, task: Task, delivery: Delivery) -> StreamWriter:
        return StreamWriter(delivery, task.spec.where, (task.progress_id,) if task.progress_id else ())

    async def _run(self, task: Task, entry: int, delivery: Delivery) -> None:
        spec = task.spec
        chat, progress = spec.chat, None
        state: TaskState
        try:
            task = await self._shown(task, delivery)
            progress = Progress(self._stream(task, delivery), task)
            view = await self._branch(task)
            state, result = await SubAgent(self.runner(spec.where, spec.user_id)).run(task, view, delivery, progress)
        except asyncio.CancelledError:
            if (chat, task.id) in self._cancelling:  # /cancel, not a halt or shutdown (those leave the entry)
                self._cancelling.discard((chat, task.id))
                await asyncio.shield(self._cancelled(task, entry, progress or Progress(self._stream(task, delivery),
                                                                                       task)))
            raise
        except NotOwner:
            raise  # another replica owns the chat now and runs the task
        except Exception:
            error_id = uuid.uuid4().hex[:8]
            log.exception("error %s in task %s of %s", error_id, task.label, chat)
            state, result = "failed", t(spec.lang, "internal_error", error_id=error_id)
        progress = progress or Progress(self._stream(task, delivery), task)
        if not await self.store.tasks.end(chat, task.id, state, result):
            await self._cancelled(task, entry, progress)  # cancelled while it ended
            return
        await progress.end(state)
        self._post_later(dataclasses.replace(task, state=state, result=result), entry, delivery)

    async def _shown(self, task: Task, delivery: Delivery) -> Task:
        """The task with its one progress message, sent now for good the first time it runs (its id is kept, so a
        run after a restart edits it)."""
        if task.progress_id:
            return task
        spec = task.spec
        sent = await delivery.send(spec.where, Reply(t(spec.lang, "task_running", id=task.label, prompt=task.headline)))
        if sent is None:
            return task
        await self.store.tasks.noted(spec.chat, task.id, progress_id=sent.message_id)
        return dataclasses.replace(task, progress_id=sent.message_id)

    async def _cancelled(self, task: Task, entry: int, progress: Progress) -> None:
        await progress.end("cancelled")
        await self.store.inbox.finish(task.spec.chat, [entry])

    async def _branch(self, task: Task) -> Session:
        """The task's side branch as a session of its own: the path to its prompt, which is stored under the message
        it was started at the first time it runs."""
        spec, store = task.spec, self.store.conversations
        info = await store.get(spec.chat, spec.conversation_id)
        if info is None:
            raise LookupError(f"conversation {spec.conversation_id} of task {task.label} is gone")
        view = Session(SessionKey.parse(spec.chat), info.id, info.root_id, spec.role or info.role,
                       settings=await self.store.settings.get(spec.chat), loaded=True, aside=True)
        if task.branch_id:
            view.path = await store.chain(spec.chat, info.id, task.branch_id)
            return view
        view.path = await store.chain(spec.chat, info.id, spec.parent_id) if spec.parent_id != info.root_id else []
        asker = {"author": spec.user_name, "author_id": spec.user_id} if spec.where.is_group else {}
        first = Message.new("user", f"[{task.label}] {spec.prompt}", **asker)  # a member's /forget_me erases it
        await self.conversations.add(view, first)
        await self.store.tasks.noted(spec.chat, task.id, branch_id=first.id)
        return view

    def _post_later(self, task: Task, entry: int, delivery: Delivery) -> None:
        """The result goes in through the chat's lane, never beside an answer there; the entry leaves with it."""
        ticket = Ticket(entry, task.spec.chat, self.store.inbox)
        self.lanes.answer(SessionKey.parse(task.spec.chat), entry,
                          lambda session: self._post(task, ticket, session, delivery), lambda: ticket.finished)

    async def _post(self, task: Task, ticket: Ticket, session: Session, delivery: Delivery) -> None:
        spec = task.spec
        await self.conversations.ensure(session)
        key = "task_result" if task.state == "done" else "task_result_failed"
        text = t(spec.lang, key, id=task.label, prompt=task.headline, result=task.result)
        message = Message.new("assistant", text)
        if session.conversation_id == spec.conversation_id:  # the chat is on it: the session's path moves too
            stored = asyncio.get_running_loop().create_future()
            self.conversations.add(session, message, stored)
            sent = None
            try:
                sent = await delivery.send(spec.where, Reply(text))
            finally:
                stored.set_result(ticket.entry if sent is not None else None)
            await self.conversations.flush(session)
            ticket.finished = sent is not None
            return
        info = await self.store.conversations.get(spec.chat, spec.conversation_id)
        if info is None:  # deleted meanwhile: the result is shown, kept nowhere
            await delivery.send(spec.where, Reply(text))
            return
        note = t(spec.lang, "task_elsewhere", conv=info.id, title=info.title or info.id)
        if await delivery.send(spec.where, Reply(f"{text}\n\n{note}")) is not None:
            await self.store.conversations.append(spec.chat, info.id, [message], finishes=ticket.entry)
            ticket.finished = True


def _name(task: Task) -> str:
    """The task's lane beside its chat's (named after the chat, so a stopping bot account waits for it too)."""
    return f"{task.spec.chat} task {task.label}"
