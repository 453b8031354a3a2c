"""Session keys, per-session state and lanes: one run at a time per session, sessions run concurrently."""

from __future__ import annotations

import asyncio
import logging
from collections import OrderedDict, deque
from collections.abc import Callable, Coroutine
from dataclasses import dataclass, field
from typing import Any

from bot.messages import ChatRef, IncomingMessage, Overheard, address
from bot.store.settings import ChatSettings
from bot.tree.model import Message

log = logging.getLogger("bothub.sessions")

Job = Callable[[], Coroutine[Any, Any, None]]
# Idle sessions kept loaded. One costs ≈ 3 KiB plus ≈ 0.5 KiB per message on its branch (tracemalloc, short
# messages), so the bound is by count and modest; a session past it is reloaded in one store call. The caches a
# turn reads next to its session (memory lines, summaries) hold as many (bot/app.py), so they miss no sooner.
IDLE_SESSIONS = 2_000
# Sessions an eviction looks at before giving up: a busy one met on the way counts as used (it goes to the back),
# so a cache full of running chats costs a new session a few steps, not a walk over all of them (10 000 chats at
# once spent 46 of 56 s in that walk).
EVICT_SCAN = 8


@dataclass(frozen=True, slots=True)
class SessionKey:
    """A DM, a group, a channel or one thread in it: the unit of isolation. Defined here only."""

    platform: str
    chat_id: str
    thread_id: str | None = None
    identity: str = ""  # the bot account ("": the platform's default one, whose keys stay as they always were)

    @classmethod
    def of(cls, msg: IncomingMessage | Overheard) -> SessionKey:
        return cls(msg.platform, msg.chat_id, msg.thread_id, msg.identity)

    @classmethod
    def at(cls, chat: ChatRef) -> SessionKey:
        return cls(chat.platform, chat.chat_id, chat.thread_id, chat.identity)

    @classmethod
    def parse(cls, storage_key: str) -> SessionKey:
        """The key behind a storage key "platform[@identity]:chat_id[#thread]" (ValueError if it is none)."""
        reached, _, rest = storage_key.partition(":")
        platform, _, identity = reached.partition("@")
        chat_id, _, thread = rest.partition("#")
        if not platform or not chat_id:
            raise ValueError(f"not a chat's storage key: {storage_key!r}")
        return cls(platform, chat_id, thread or None, identity)

    @property
    def storage_key(self) -> str:
        """Everything a chat owns (conversations, memory, settings, files, jobs) is stored under this key, so two
        bot accounts in one group never share data: `chat:-100` and `chat@support:-100` on a platform `chat`."""
        base = f"{address(self.platform, self.identity)}:{self.chat_id}"
        return f"{base}#{self.thread_id}" if self.thread_id else base


@dataclass
class Session:
    """What the hub keeps in memory for a session; everything here can be rebuilt from the store."""

    key: SessionKey
    conversation_id: str | None = None
    root_id: str | None = None
    role: str = "default"
    path: list[Message] = field(default_factory=list)  # root-exclusive chain to the cursor
    settings: ChatSettings = field(default_factory=ChatSettings)  # per-chat choices: language, model
    writing: asyncio.Task[None] | None = None  # the newest message write still in flight
    last_chat: ChatRef | None = None  # where this session's latest message came from (for shutdown notes)
    loaded: bool = False
    aside: bool = False  # a side branch's own view (a background task's): its writes never move the cursor
    intake: asyncio.Lock = field(default_factory=asyncio.Lock)  # keeps accepting and queueing in arrival order

    @property
    def cursor(self) -> str | None:
        return self.path[-1].id if self.path else self.root_id


class Lane:
    """FIFO of jobs for one session with at most one running; `stop()` cancels the run and drops the queue.

    A job may carry the id of its durable inbox entry; `take_dropped()` hands over the entries `stop()`
    dropped, so the hub decides whether they are gone (/stop) or wait for the next start (shutdown).
    """

    def __init__(self, name: str) -> None:
        self.name = name
        self._pending: deque[tuple[Job, int | None, int | None]] = deque()  # (job, entry, its place in the chat)
        self._dropped: list[int] = []
        self._worker: asyncio.Task[None] | None = None
        self._current: asyncio.Task[None] | None = None

    @property
    def busy(self) -> bool:
        return self._worker is not None

    @property
    def queued(self) -> int:
        return len(self._pending)

    def submit(self, job: Job, entry: int | None = None, seq: int | None = None) -> None:
        """Queue a job; one for an inbox entry with its place in the chat's sequence (`seq`) goes before waiting
        entries later in it (another replica may hand an older entry over after a newer one arrived here)."""
        at = len(self._pending)
        while seq is not None and at and (later := self._pending[at - 1][2]) is not None and later > seq:
            at -= 1
        self._pending.insert(at, (job, entry, seq))
        if self._worker is None:
            self._worker = asyncio.create_task(self._drain(), name=f"lane:{self.name}")

    async def _drain(self) -> None:
        try:
            while self._pending:
                job, _, _ = self._pending.popleft()
                self._current = asyncio.create_task(job())
                try:
                    await self._current
                except asyncio.CancelledError:
                    if self._current.cancelled():
                        continue  # /stop or shutdown cancelled the job, not this lane
                    raise
                except Exception:  # jobs report their own errors; a bug must not strand the queue
                    log.exception("job in lane %s failed", self.name)
        finally:
            self._current = None
            self._worker = None

    def stop(self) -> tuple[bool, int]:
        """Cancel the running job and clear the queue; returns (was_running, dropped)."""
        dropped = len(self._pending)
        self._dropped += [entry for _, entry, _ in self._pending if entry is not None]
        self._pending.clear()
        running = self._current is not None and not self._current.done()
        if running and self._current is not None:
            self._current.cancel()
        return running, dropped

    def take_dropped(self) -> list[int]:
        dropped, self._dropped = self._dropped, []
        return dropped

    async def interrupt(self) -> tuple[bool, int]:
        """`stop`, then wait until the cancelled job has wound down, so its partial answer is shown before
        whatever is said next."""
        current = self._current
        running, dropped = self.stop()
        if running and current is not None:
            await asyncio.wait([current])
        return running, dropped

    async def join(self) -> None:
        if self._worker is not None:
            await asyncio.shield(self._worker)


class Sessions:
    """In-memory sessions with an LRU bound; idle sessions are dropped and reloaded lazily from the store."""

    def __init__(self, max_idle: int = IDLE_SESSIONS) -> None:
        self._sessions: OrderedDict[SessionKey, Session] = OrderedDict()
        self._lanes: dict[SessionKey, Lane] = {}
        self._keys: dict[str, SessionKey] = {}  # storage key → key, for sessions or lanes held here
        self._max_idle = max_idle

    def get(self, key: SessionKey) -> Session:
        session = self._sessions.get(key)
        if session is None:
            session = self._sessions[key] = Session(key)
            self._keys[key.storage_key] = key
            self._evict(key)
        else:
            self._sessions.move_to_end(key)
        return session

    def lane(self, key: SessionKey) -> Lane:
        lane = self._lanes.get(key)
        if lane is None:
            lane = self._lanes[key] = Lane(key.storage_key)
            self._keys[key.storage_key] = key
        return lane

    def busy_at(self, storage_key: str) -> bool:
        """The session's lane is running or has work queued."""
        key = self._keys.get(storage_key)
        lane = self._lanes.get(key) if key is not None else None
        return lane is not None and lane.busy

    def forget(self, storage_key: str) -> None:
        """Drop an idle session's cached state: while another replica owns the chat, it may change it."""
        key = self._keys.get(storage_key)
        if key is None or self.busy_at(storage_key):
            return
        self._sessions.pop(key, None)
        self._lanes.pop(key, None)
        del self._keys[storage_key]

    def forget_all(self) -> None:
        for storage_key in list(self._keys):
            self.forget(storage_key)

    def lanes(self) -> list[Lane]:
        return list(self._lanes.values())

    def busy(self) -> list[tuple[Session, Lane]]:
        return [(self._sessions[key], lane) for key, lane in self._lanes.items()
                if lane.busy and key in self._sessions]

    def _evict(self, new: SessionKey) -> None:
        """Drop the least recently used idle sessions past the bound; when EVICT_SCAN busy ones (or the one just
        made) come first, the cache stays over its bound for now: running chats need their sessions anyway."""
        looked = 0
        while len(self._sessions) > self._max_idle and looked < EVICT_SCAN:
            key = next(iter(self._sessions))
            lane = self._lanes.get(key)
            if key == new or (lane is not None and lane.busy):
                self._sessions.move_to_end(key)
                looked += 1
                continue
            del self._sessions[key]
            self._lanes.pop(key, None)
            self._keys.pop(key.storage_key, None)

    def __len__(self) -> int:
        return len(self._sessions)
