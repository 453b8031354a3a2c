"""The contract every platform adapter fulfils, how an adapter describes itself, and the typed failures
the hub handles in one place.

Core never names a platform: each package under `adapters/` exports `SPEC` (an AdapterSpec), and core
finds it by the package's name (`platforms:` in the config, or the presence of its secrets).
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import functools
import importlib
import logging
import pkgutil
import re
import sys
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator, Mapping
from dataclasses import dataclass
from datetime import datetime
from typing import Any, Generic, Literal, Protocol, TypeVar, runtime_checkable

from aiohttp import web
from pydantic import BaseModel, ConfigDict, Field

from bot.messages import Attachment, ChatRef, HistoryPage, InboundEvent, SentRef
from bot.replies import Reply

log = logging.getLogger("bothub.adapter")
MessageHandler = Callable[[InboundEvent], Awaitable[None]]  # addressed messages and overheard group talk
WebHandler = Callable[[web.Request], Awaitable[web.StreamResponse]]
# (group name, count, on_change): hold a fair share of the numbered roles name:0 … name:count-1 among the
# replicas (the one long poller, gateway shards); resolves once the first share reached on_change.
Share = Callable[[str, int, Callable[[frozenset[int]], Awaitable[None]]], Awaitable[None]]


@dataclass(frozen=True, slots=True)
class ConversationChoice:
    id: str
    title: str
    archived: bool = False
    updated_at: datetime | None = None
    messages: int = 0


@dataclass(frozen=True, slots=True)
class MenuCommand:
    """A chat command as a platform's native menu shows it, built from the core command registry."""

    name: str
    en: str  # one-line description
    zh: str
    usage: str  # e.g. "/goto <n>"; "/tree" when it takes no argument

    @property
    def takes_arguments(self) -> bool:
        return self.usage.strip() != f"/{self.name}"


@dataclass(frozen=True, slots=True)
class TokenHolder:
    """Whom an HTTP API bearer token belongs to: its id namespaces the holder's chats."""

    id: str
    name: str
    signing_key: str  # the token's digest (what the store keeps): the key of the holder's callback signatures


RelayEvent = dict[str, Any]  # JSON-able


class Relay(Protocol):
    """Events between replicas (PostgreSQL LISTEN/NOTIFY): a reply made on the chat's owner reaches the replica
    whose HTTP request or browser tab waits for it. Only other replicas hear a publish, in publish order."""

    async def publish(self, topic: str, event: RelayEvent) -> None: ...

    def listen(self, topic: str, heard: Callable[[RelayEvent], None]) -> Callable[[], None]:
        """Call `heard` with each event published on `topic` from now on; returns the way to stop."""
        ...


@dataclass(frozen=True, slots=True)
class AdapterServices:
    """What the core lends an adapter: read-only queries, persisted dedupe and the hub's web server."""

    # (chat, asking user id) → that chat's conversations, e.g. for autocomplete; empty unless access allows the user
    list_conversations: Callable[[ChatRef, str], Awaitable[list[ConversationChoice]]]
    seen: Callable[[str], Awaitable[bool]]  # records an event key; True if it was already handled
    add_route: Callable[[str, str, WebHandler], None]  # (method, path, handler) on the hub's aiohttp server
    language: str = "en"
    # resolves once everything a chat has sent so far is answered: a script feeds its next line only then
    answered: Callable[[ChatRef], Awaitable[None]] | None = None
    commands: tuple[MenuCommand, ...] = ()  # every chat command, for native menus
    max_file_bytes: int = 20_000_000  # media.max_bytes: an adapter that receives uploads itself stops there
    # an HTTP API bearer token → its holder; None for an unknown or revoked token
    check_token: Callable[[str], Awaitable[TokenHolder | None]] | None = None
    share: Share | None = None  # None: one process, which holds every role
    # (chat, before message id or None, limit) → a page of the chat's current branch, newest last
    history: Callable[[ChatRef, str | None, int], Awaitable[HistoryPage]] | None = None
    relay: Relay | None = None  # None: one process, where every reply is made where it is awaited
    unsee: Callable[[str], Awaitable[None]] | None = None  # takes back what `seen` recorded (None: nothing kept)

    async def once(self, key: str, hand_over: Callable[[], Awaitable[None]]) -> bool:
        """`hand_over` unless the event's key was seen; False for a redelivery. A hand-over that fails (NotKept,
        any error, a stop's cancellation) takes its mark back, so the platform's redelivery is taken, not dropped.
        Any failure is raised as NotKept, a cancellation as itself."""
        try:
            if await self.seen(key):
                return False
        except Exception as e:
            raise NotKept(f"{key}: the dedupe mark failed: {e!r}") from e
        try:
            await hand_over()
        except BaseException as e:
            if self.unsee is not None:
                try:
                    await asyncio.shield(self.unsee(key))
                except Exception:
                    log.exception("event %s not kept, and its dedupe mark stays: a redelivery is dropped", key)
            if isinstance(e, Exception) and not isinstance(e, NotKept):
                raise NotKept(f"{key}: {e!r}") from e
            raise
        return True


@dataclass(frozen=True, slots=True)
class Capabilities:
    """What a platform allows; the hub's streaming and chunking read these instead of platform names.

    No defaults: every adapter states every limit, so no platform inherits another's rules.
    """

    max_text: int  # characters per message, after rendering
    can_edit: bool
    edit_interval: float  # seconds between edits of one message in a private chat
    group_edit_interval: float  # same, in groups
    buttons: bool
    feedback: bool  # draws native 👍/👎 controls under an answer (Reply.feedback); False: the answer has none
    groups: bool  # group chats exist, where a mention addresses the bot; False: every chat is one to one
    overhears: bool  # un-addressed group talk can reach the bot (privacy mode off, content intent, read-all)
    refuses_sends: bool  # a send may be refused (429 "wait", the chat is gone); False: sending only queues
    tree_budget: int  # characters a /tree rendering may use
    burst: int  # per-chat sends+edits allowed at once before pacing applies
    rate: float  # per-chat sends+edits per second after the burst
    group_send_window: tuple[int, float] | None  # at most N new messages into one group per T s; None: no rule
    # at most N new messages into any one chat, one-to-one chats too, per T s (a per-conversation rule); None: no rule
    chat_send_window: tuple[int, float] | None
    global_window: tuple[int, float]  # at most N sends+edits over all chats per T seconds
    # at most N edits over all chats per T seconds, apart from sends (a per-method tier, such as an update method
    # limited per workspace); None: edits count only against the chat's and the global budgets
    edit_window: tuple[int, float] | None
    # at most N new messages over all chats per T seconds, apart from edits (a per-method limit, such as a message
    # or card creation API limited per app); None: sends count only against the chat's, group's and global budgets
    send_window: tuple[int, float] | None
    threads_paced_apart: bool  # a thread has its own per-chat budget (it is a channel of its own)
    interactions_paced_apart: bool  # replies to an interaction or press go through its own webhook, not the chat's
    replace_pressed: bool  # the first reply to a button press may replace the pressed message
    closes_streams: bool  # a message sent with final=False shows "in progress" until a final edit
    restart_when_down: bool  # the watchdog restarts it; False where "down" is a normal end (console EOF)
    # events may come out of the platform's order (parallel webhook deliveries, a redelivery after a replica
    # died): a fresh arrival is held back a moment so an earlier one (by IncomingMessage.order) goes first
    reorders: bool
    columns: int  # answers one message can show side by side (a duel as one card); 0: one answer per message


class NotKept(Exception):
    """Raised by the hub's handler: the event could not be stored, so nothing will answer it. Do not acknowledge
    it (a non-2xx answer, no ACK, no confirmed offset): the platform's redelivery is welcome."""


class SendError(Exception):
    """Base of the failures an adapter may raise from send/edit."""


class RateLimited(SendError):
    def __init__(self, retry_after: float) -> None:
        super().__init__(f"rate limited, retry after {retry_after:.1f}s")
        self.retry_after = retry_after


class ChatUnavailable(SendError):
    """The bot was blocked, kicked or lacks permission: stop sending to this chat."""


class DraftsRefused(SendError):
    """The platform would not show a draft here (nothing was shown): the hub streams by messages in this chat, or
    (`everywhere`) in every chat of the adapter, from now on."""

    def __init__(self, reason: str, *, everywhere: bool) -> None:
        super().__init__(reason)
        self.everywhere = everywhere


class SendFailed(SendError):
    """Any other failure; the message says what the platform answered."""


@dataclass(frozen=True, slots=True)
class VoiceNote:
    """An OGG/Opus file meant as a voice message, where the platform has them (bot/media/speech.py)."""

    duration: float  # seconds
    waveform: str  # base64, one byte (0-255) per point: the shape a player may draw


@dataclass(frozen=True, slots=True)
class OutgoingFile:
    """A file from the chat's folder to post in the chat; images go as photos where the platform has them.

    It carries the bytes, read once through the file jail, so nothing can swap the file before upload."""

    data: bytes
    name: str
    mime: str
    caption: str = ""
    voice: VoiceNote | None = None  # an OGG/Opus answer to post as a voice message where the platform has them

    @property
    def is_image(self) -> bool:
        return self.mime in ("image/jpeg", "image/png", "image/gif", "image/webp")


class FileTransfer(Protocol):
    """An adapter's file handling: fetch what users attach, post files the agent sends."""

    max_upload: int  # bytes the platform accepts in one file the bot sends

    def download(self, attachment: Attachment) -> AsyncIterator[bytes]:
        """The attachment's bytes in chunks; raises SendFailed if the platform won't give them."""
        ...

    async def upload(self, chat: ChatRef, file: OutgoingFile) -> SentRef: ...


class Adapter(Protocol):
    """What `AdapterSpec.create` returns."""

    name: str
    capabilities: Capabilities

    @property
    def files(self) -> FileTransfer | None:
        """None: this platform takes and sends text only."""
        ...

    async def start(self, on_message: MessageHandler) -> None: ...

    async def stop(self) -> None: ...

    async def send(self, chat: ChatRef, reply: Reply, *, final: bool = True) -> SentRef:
        """final=False: the start of a streamed answer; edits follow, the last of them with final=True."""
        ...

    async def edit(self, ref: SentRef, reply: Reply, *, final: bool) -> None:
        """final=True: the message's content is complete (the platform may close its stream)."""
        ...

    async def typing(self, chat: ChatRef) -> None: ...

    def connected(self) -> bool:
        """For /readyz and the watchdog: is the polling loop / gateway / long connection alive?"""
        ...


@runtime_checkable
class Drafting(Protocol):
    """What an adapter adds where the platform streams natively in one-to-one chats: a growing answer shown as an
    ephemeral draft (an animated preview that costs none of the message budgets), then sent as one message.

    The hub calls `draft` for a stream's partial updates in one-to-one chats, at most once per `draft_interval`
    per chat, and ends the answer with an ordinary `send`, which replaces the draft; a draft is never edited."""

    draft_interval: float  # seconds between one chat's draft updates
    draft_life: float  # seconds the platform shows a draft that is not updated (the hub renews it before)

    async def draft(self, chat: ChatRef, reply: Reply, ref: SentRef | None) -> SentRef:
        """Show `reply` as the chat's draft: a new one (`ref` None; SentRef.draft is set) or `ref` updated.
        DraftsRefused where the platform will not show drafts."""
        ...


class AccessConfig(BaseModel):
    """Who may talk to the bot on one platform; see bot/chats/access.py. Ids may be written as YAML numbers
    (`admins: [123]`, `allow_chats: [-1001234567890]`): they are kept as text."""

    model_config = ConfigDict(extra="forbid", coerce_numbers_to_str=True)
    allow_users: list[str] = Field(default_factory=list)
    allow_chats: list[str] = Field(default_factory=list)
    admins: list[str] = Field(default_factory=list)
    dm_policy: Literal["open", "allowlist", "pairing"] = "open"
    group_policy: Literal["open", "allowlist"] = "open"
    group_commands: Literal["anyone", "admins"] = "anyone"


class PlatformConfig(BaseModel):
    """The base of every adapter's config section (the YAML key is the adapter's name)."""

    model_config = ConfigDict(extra="forbid")
    enabled: bool | None = None  # None: on when the spec's required env vars are all set
    group_context: bool = True  # keep un-addressed group messages as context (see the top-level group_context)
    access: AccessConfig | None = Field(default_factory=AccessConfig)  # None: no rules (a local terminal)


S = TypeVar("S", bound=PlatformConfig)


@dataclass(frozen=True)
class CliCommand(Generic[S]):
    """An extra `bothub <name>` subcommand an adapter contributes (e.g. registering slash commands).

    `run` gets the section, the environment, the parsed arguments and every chat command (the same tuple
    as AdapterServices.commands), so an adapter never reaches into the command registry itself."""

    name: str
    help: str
    arguments: Callable[[argparse.ArgumentParser], None]
    run: Callable[[S, Mapping[str, str], argparse.Namespace, tuple[MenuCommand, ...]], Awaitable[int]]  # exit code


@dataclass(frozen=True)
class AdapterSpec(Generic[S]):
    """Everything core needs to know about one platform, exported as `SPEC` by `adapters/<name>/`.

    `create` and `doctor` should import the platform SDK only when called: specs are read at start-up
    for every installed adapter, and some SDKs take seconds to import.
    """

    name: str
    config_model: type[S]
    create: Callable[[S, Mapping[str, str], AdapterServices], Adapter]
    secrets: tuple[str, ...] = ()  # env vars holding secrets: masked in every log line
    required_env: tuple[str, ...] = ()  # all set (and no `platforms:` list): the platform runs
    doctor: Callable[[S, Mapping[str, str]], Awaitable[str]] | None = None  # one line, or raises
    commands: tuple[CliCommand[S], ...] = ()
    loggers: tuple[str, ...] = ()  # the SDK's chatty loggers, kept at WARNING
    first_steps: tuple[str, str] = ("", "")  # (en, zh): where its credentials come from, for `bothub onboard`

    @property
    def account(self) -> tuple[str, ...]:
        """The env vars that make one bot account: the required ones (an app's id too) and the secrets. An identity's
        credentials are these, so a second app brings its own app id, not the default app's."""
        return tuple(dict.fromkeys((*self.required_env, *self.secrets)))


def imported(module: str, function: str, *, hide: tuple[str, ...] = ()) -> Callable[..., Any]:
    """`module.function`, imported at its first call: a spec's `create` and `doctor` without the SDK's
    import cost for every platform that is installed but not run.

    `hide` names optional packages the SDK imports eagerly inside `try: … except ImportError` for features
    the adapter never uses: they are hidden while `module` is first imported, so the SDK takes its "not
    installed" branch and they never load; afterwards anything else may import them as usual."""

    def call(*args: Any, **kwargs: Any) -> Any:
        with hidden(hide):
            loaded = importlib.import_module(module)
        return getattr(loaded, function)(*args, **kwargs)

    return call


@contextlib.contextmanager
def hidden(names: tuple[str, ...]) -> Iterator[None]:
    """`import name` raises ImportError inside the block (a None entry in sys.modules means "not found")."""
    absent = [name for name in names if name not in sys.modules]
    for name in absent:
        sys.modules[name] = None  # type: ignore[assignment]
    try:
        yield
    finally:
        for name in absent:
            if sys.modules.get(name, False) is None:
                del sys.modules[name]


ADAPTER_PACKAGE = "adapters"
_NAME = re.compile(r"[a-z][a-z0-9_]*")


@functools.cache
def installed_platforms() -> tuple[str, ...]:
    """Names of the adapter packages present: a new platform is one new folder."""
    package = importlib.import_module(ADAPTER_PACKAGE)
    return tuple(sorted(m.name for m in pkgutil.iter_modules(package.__path__) if m.ispkg))


def find_spec(name: str) -> AdapterSpec[Any] | None:
    """The spec of the adapter package called `name`, or None if there is none."""
    if not _NAME.fullmatch(name) or name not in installed_platforms():
        return None
    spec = getattr(importlib.import_module(f"{ADAPTER_PACKAGE}.{name}"), "SPEC", None)
    return spec if isinstance(spec, AdapterSpec) else None


def installed_specs() -> list[AdapterSpec[Any]]:
    return [spec for name in installed_platforms() if (spec := find_spec(name)) is not None]
