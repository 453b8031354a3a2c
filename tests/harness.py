"""Run the real app (store, agent, hub, adapters) against fakes on 127.0.0.1, for end-to-end tests."""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator, Callable, Mapping
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import yaml

from bot.adapter import Capabilities, MessageHandler, OutgoingFile, SendFailed
from bot.agent.titles import TITLER
from bot.agent.topics import TAGGER
from bot.app import App
from bot.config import load_config
from bot.messages import Attachment, ChatRef, IncomingMessage, ReplyTo, SentRef
from bot.replies import Reply
from bot.store.inbox import Accepted
from tests.fakes.openai_api import FakeOpenAI


def make_config(tmp_path: Path, llm_base_url: str, config: Mapping[str, Any] | None = None,
                env: Mapping[str, str] | None = None) -> tuple[Any, dict[str, str]]:
    """A Config rooted in tmp_path, pointed at the fake LLM; `config` is YAML-shaped overrides.

    Automatic titles are off unless a test turns them on: their background request would otherwise take a
    step another test scripted for its next answer."""
    raw = {"data_dir": str(tmp_path / "data"), **(config or {})}
    raw["llm"] = {"auto_titles": False, **raw.get("llm", {})}
    raw["server"] = {"port": 0, **raw.get("server", {})}  # 8080 may be taken on this machine
    path = tmp_path / "bothub.yaml"
    path.write_text(yaml.safe_dump(raw), encoding="utf-8")
    full_env = {"OPENAI_BASE_URL": llm_base_url, "OPENAI_API_KEY": "test-key", "BOTHUB_MODEL": "fake-model",
                **(env or {})}
    return load_config(path, env=full_env), full_env


@asynccontextmanager
async def running_app(
    tmp_path: Path,
    llm_base_url: str,
    platforms: tuple[str, ...] = (),
    *,
    config: Mapping[str, Any] | None = None,
    env: Mapping[str, str] | None = None,
    adapters: tuple[Any, ...] = (),
    clock: Any = None,
) -> AsyncIterator[App]:
    """Start the whole app with the named platform adapters (plus any adapter objects given)."""
    cfg, full_env = make_config(tmp_path, llm_base_url, config, env)
    cfg.llm.max_retries = 0
    app = App(cfg, full_env, clock, platforms=platforms, adapters=adapters)
    await app.start()
    try:
        yield app
    finally:
        await app.stop()


# A platform with room to spare: tests of the hub are not slowed down by pacing.
ROOMY = Capabilities(max_text=4000, can_edit=True, edit_interval=0.05, group_edit_interval=0.05, buttons=True,
                     feedback=False,
                     groups=True, overhears=True, refuses_sends=True, tree_budget=3500, burst=1000, rate=1000.0,
                     group_send_window=(20, 60.0), chat_send_window=None, global_window=(10_000, 1.0),
                     edit_window=None, send_window=None,
                     threads_paced_apart=False, interactions_paced_apart=False, replace_pressed=True,
                     closes_streams=False, restart_when_down=True, reorders=False, columns=0)


class RecordingFiles:
    """Files on the in-memory platform: attachments served by handle, uploads kept with their bytes."""

    max_upload = 5_000_000

    def __init__(self) -> None:
        self.served: dict[str, bytes] = {}  # handle → bytes a user attached
        self.chunk = 65_536
        self.uploads: list[tuple[ChatRef, OutgoingFile, bytes]] = []

    async def download(self, attachment: Attachment) -> AsyncIterator[bytes]:
        data = self.served.get(attachment.handle)
        if data is None:
            raise SendFailed(f"no file {attachment.handle}")
        for start in range(0, len(data), self.chunk):
            yield data[start : start + self.chunk]

    async def upload(self, chat: ChatRef, file: OutgoingFile) -> SentRef:
        self.uploads.append((chat, file, file.data))
        return SentRef(chat, f"file-{len(self.uploads)}")


class RecordingAdapter:
    """An in-memory platform: tests inject messages and read what each chat shows after edits."""

    name = "recording"

    def __init__(self, capabilities: Capabilities | None = None) -> None:
        self.capabilities = capabilities or ROOMY
        self.files: RecordingFiles | None = RecordingFiles()
        self.on_message: MessageHandler | None = None
        self.sent: list[tuple[ChatRef, Reply]] = []
        self.sent_final: list[bool] = []  # the final flag of each send, in order
        self.edits: list[tuple[SentRef, Reply, bool]] = []  # (message, content, final)
        self.typings: list[ChatRef] = []
        self.visible: dict[str, tuple[ChatRef, Reply]] = {}  # message id → latest content, in send order
        self.fail_sends: list[Exception] = []  # raised by the next send() calls, one each (e.g. RateLimited)
        self.fail_edits: list[Exception] = []  # same for edit()
        self.attempts = {"send": 0, "edit": 0}
        self._next = 0

    async def start(self, on_message: MessageHandler) -> None:
        self.on_message = on_message

    async def stop(self) -> None:
        return None

    def connected(self) -> bool:
        return self.on_message is not None

    async def send(self, chat: ChatRef, reply: Reply, *, final: bool = True) -> SentRef:
        self.attempts["send"] += 1
        if self.fail_sends:
            raise self.fail_sends.pop(0)
        self._next += 1
        ref = SentRef(chat, str(self._next))
        self.sent.append((chat, reply))
        self.sent_final.append(final)
        self.visible[ref.message_id] = (chat, reply)
        return ref

    async def edit(self, ref: SentRef, reply: Reply, *, final: bool) -> None:
        self.attempts["edit"] += 1
        if self.fail_edits:
            raise self.fail_edits.pop(0)
        self.edits.append((ref, reply, final))
        self.visible[ref.message_id] = (ref.chat, reply)

    async def typing(self, chat: ChatRef) -> None:
        self.typings.append(chat)

    async def say(self, text: str, chat_id: str = "c1", *, user: str = "u1", group: bool = False,
                  mentioned: bool = True, thread_id: str | None = None, message_id: str | None = None,
                  **extra: Any) -> None:
        assert self.on_message is not None, "adapter not started"
        self._next += 1
        await self.on_message(IncomingMessage(
            platform=self.name, chat_id=chat_id, thread_id=thread_id, message_id=message_id or f"in{self._next}",
            user_id=user, user_name=f"User {user}", is_group=group, mentioned=mentioned, text=text, **extra,
        ))

    def texts(self, chat_id: str = "c1") -> list[str]:
        """What the chat shows now, one entry per bot message, oldest first."""
        return [reply.text for chat, reply in self.visible.values() if chat.chat_id == chat_id]


def answered_id(chat: ChatRef) -> str | None:
    """The id of the inbound message a reply answers (what bench and fuzz tests correlate by)."""
    return chat.origin.message_id if isinstance(chat.origin, ReplyTo) else None


def answer_requests(llm: FakeOpenAI) -> list[dict[str, Any]]:
    """The model requests that answered messages: a conversation's title (and a duel's topic) is asked for too."""
    return [r for r in llm.requests if r["body"]["messages"][0]["content"] not in (TITLER, TAGGER)]


async def wait_for(predicate: Callable[[], bool], within: float = 10.0, interval: float = 0.02) -> None:
    """Poll until `predicate()` holds; fails the test with a clear message on timeout."""
    deadline = time.monotonic() + within
    while not predicate():
        if time.monotonic() > deadline:
            raise AssertionError(f"condition not met within {within}s")
        await asyncio.sleep(interval)


def entry_id(accepted: Accepted | None) -> int | None:
    """The id of an entry the inbox just accepted (None: a redelivery), for tests that need only the id."""
    return accepted.id if accepted is not None else None
