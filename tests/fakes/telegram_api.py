"""A fake Telegram Bot API on 127.0.0.1 (aiohttp) that python-telegram-bot talks to unchanged.

Speaks the real wire format (POST /bot<token>/<method>, form-encoded with JSON-encoded non-string
values; {"ok":…} answers with real HTTP statuses), is strict like Telegram (HTML entities, 4096
UTF-16 units, "message is not modified", unknown chats, stale callback queries), records every call,
lets tests inject updates (delivered by getUpdates long polling, or POSTed to a webhook once one is
set, filtered by `allowed_updates` as Telegram does) and shows each chat as its members would see it: the
current text of every message after edits. Flood limits are on, with Telegram's published values.
"""

from __future__ import annotations

import asyncio
import itertools
import time
from collections.abc import Callable
from typing import Any

import aiohttp
from aiohttp import web

from tests.fakes.budgets import Judged, SlidingWindows
from tests.fakes.serve import serve_local
from tests.fakes.telegram_drafts import DRAFTS_PER_SECOND, Draft, DraftMethods
from tests.fakes.telegram_files import FileMethods, Upload
from tests.fakes.telegram_rules import (
    CHAT_ACTIONS,
    MEDIA,
    ApiError,
    Call,
    ChatMessage,
    Failure,
    FloodLimits,
    Rejected,
    auto_entities,
    check_commands,
    check_markup,
    decode_form,
    visible_text,
)
from tests.fakes.telegram_update_delivery import UpdateDelivery
from tests.fakes.telegram_updates import UpdateFeed

TOKEN = "123456:TEST-TOKEN"
BOT_USER = {"id": 1000001, "is_bot": True, "first_name": "Hub", "username": "hub_test_bot",
            "can_join_groups": True, "can_read_all_group_messages": False, "supports_inline_queries": False}
DEFAULT_USER = {"id": 42, "is_bot": False, "first_name": "Ann", "last_name": "Lee", "username": "ann"}


class FakeTelegram(UpdateDelivery, FileMethods, DraftMethods, Judged):
    def __init__(self, token: str = TOKEN, bot_user: dict[str, Any] | None = None) -> None:
        Judged.__init__(self)
        self.token = token
        self.bot_user = bot_user or dict(BOT_USER)
        self.calls: list[Call] = []
        self.flood: FloodLimits | None = FloodLimits()  # None only where a test says why
        # the same limits, only recorded: a breach fails the test (budgets.py); two requests the bot spaced by its
        # pacing may arrive up to 0.1 s closer on a loaded machine (one waited longer in a loop), not a breach
        self.judge = FloodLimits(jitter=0.1)
        self.updates = UpdateFeed()
        self.webhook: dict[str, Any] | None = None
        self.webhook_statuses: list[int] = []
        self.commands: dict[tuple[str, str], list[dict[str, str]]] = {}  # (scope type, language) → list
        self.answered: list[str] = []
        self.stored_files: dict[str, bytes] = {}  # file_id → bytes a user sent (getFile serves them)
        self.uploads: list[Upload] = []  # files the bot sent, with their bytes
        self.drafts: list[Draft] = []  # sendMessageDraft, apart from messages (telegram_drafts.py)
        self._open_drafts: dict[int, Draft] = {}
        self.draft_window = SlidingWindows(DRAFTS_PER_SECOND, 1.0)
        self.downloads: list[str] = []  # file_ids the bot fetched
        self.port = 0
        self._failures: list[Failure] = []
        self._holds: list[tuple[Callable[[str, dict[str, Any]], bool], asyncio.Event]] = []
        self.held: list[Call] = []  # calls that reached a hold (answered, if at all, once it is released)
        self._blocked: set[int] = set()
        self._chats: dict[int, dict[str, Any]] = {}
        self._messages: dict[int, dict[int, ChatMessage]] = {}
        self._queries: set[str] = set()
        self._last_ids: dict[int, int] = {}
        self._in_flight = 0  # bot requests being answered (long polls not counted)
        self._polls = 0  # getUpdates calls being answered
        self.overlapping_polls = 0  # getUpdates calls made while another one was open (two pollers)
        self._last_request = time.monotonic()
        self._query_ids = itertools.count(1)
        self._runner: web.AppRunner | None = None
        self._client: aiohttp.ClientSession | None = None
        self._tasks: set[asyncio.Task[None]] = set()
        self._last_push: dict[Any, asyncio.Task[None]] = {}  # chat id → its latest webhook POST

    # ---- lifecycle ------------------------------------------------------------------------------
    @property
    def api_base(self) -> str:
        """What TELEGRAM_API_BASE / telegram.api_base should be set to."""
        return f"http://127.0.0.1:{self.port}"

    @property
    def env(self) -> dict[str, str]:
        """The environment that points a bothub at this fake."""
        return {"TELEGRAM_BOT_TOKEN": TOKEN, "TELEGRAM_API_BASE": self.api_base}

    async def start(self) -> None:
        app = web.Application()
        app.router.add_post("/bot{token}/{method}", self._handle)
        app.router.add_get("/file/bot{token}/{path:.+}", self.serve_file)
        self._runner, self.port = await serve_local(app, handler_cancellation=True)  # like a server seeing a hang-up
        self._client = aiohttp.ClientSession()

    async def stop(self) -> None:
        for task in list(self._tasks):
            task.cancel()
        await asyncio.gather(*self._tasks, return_exceptions=True)
        if self._client:
            await self._client.close()
        if self._runner:
            await self._runner.cleanup()

    # ---- test controls --------------------------------------------------------------------------
    def open_chat(self, chat_id: int, chat_type: str | None = None, *, forum: bool = False,
                  title: str = "Test group", user: dict[str, Any] | None = None) -> dict[str, Any]:
        """Make a chat exist (the bot can only post where it has been talked to or added)."""
        kind = chat_type or ("private" if chat_id > 0 else "supergroup")
        chat: dict[str, Any] = {"id": chat_id, "type": kind}
        if kind == "private":
            chat["first_name"] = (user or DEFAULT_USER)["first_name"]
        else:
            chat["title"] = title
        if forum:
            chat["is_forum"] = True
        self._chats.setdefault(chat_id, chat)
        self._messages.setdefault(chat_id, {})
        return self._chats[chat_id]

    def fail(self, method: str, status: int, description: str, *, retry_after: int | None = None,
             chat_id: int | None = None, times: int = 1) -> None:
        """Script the next `times` calls of `method` (optionally only for one chat) to fail."""
        self._failures.append(Failure(method, status, description, retry_after, chat_id, times))

    def rate_limit(self, method: str, retry_after: int, *, times: int = 1) -> None:
        self.fail(method, 429, f"Too Many Requests: retry after {retry_after}", retry_after=retry_after,
                  times=times)

    def hold(self, matches: Callable[[str, dict[str, Any]], bool]) -> asyncio.Event:
        """Calls for which `matches(method, params)` wait, unapplied, until the returned event is set: a
        platform slow to take one request (a bot that hangs up meanwhile has sent nothing)."""
        gate = asyncio.Event()
        self._holds.append((matches, gate))
        return gate

    def block(self, chat_id: int) -> None:
        """The user blocked the bot (or it was kicked): every call for that chat answers 403."""
        self._blocked.add(chat_id)

    def inject_message(self, chat_id: int, text: str = "", *, chat_type: str | None = None,
                       from_user: dict[str, Any] | None = None, entities: list[dict[str, Any]] | None = None,
                       reply_to: int | None = None, thread_id: int | None = None, media: str | None = None,
                       kind: str = "message") -> dict[str, Any]:
        """A user writes `text` (or sends `media` with `text` as caption). Entities default to what
        Telegram's clients produce: a bot_command at offset 0 and @mentions."""
        user = from_user or DEFAULT_USER
        chat = self.open_chat(chat_id, chat_type, forum=thread_id is not None, user=user)
        message_id = self._next_message_id(chat_id)
        msg: dict[str, Any] = {"message_id": message_id, "date": int(time.time()), "chat": chat, "from": user}
        ents = auto_entities(text) if entities is None else entities
        if media:
            msg[media] = MEDIA[media]
            if text:
                msg["caption"], msg["caption_entities"] = text, ents
        elif text:
            msg["text"], msg["entities"] = text, ents
        if thread_id is not None:
            msg["message_thread_id"], msg["is_topic_message"] = thread_id, True
        if reply_to is not None:
            msg["reply_to_message"] = self._message_json(self._messages[chat_id][reply_to])
        elif thread_id is not None:  # Telegram links topic messages to the topic's creation message
            msg["reply_to_message"] = {"message_id": thread_id, "date": 0, "chat": chat, "from": user,
                                       "message_thread_id": thread_id, "is_topic_message": True,
                                       "forum_topic_created": {"name": "topic", "icon_color": 7322096}}
        self._messages[chat_id][message_id] = ChatMessage(chat_id, message_id, False, text, thread_id, text,
                                                          reply_to=reply_to)
        return self.inject_update({kind: msg})

    def inject_callback(self, chat_id: int, message_id: int, data: str,
                        from_user: dict[str, Any] | None = None) -> str:
        """A user presses an inline button under message `message_id`; returns the query id."""
        query_id = f"q{next(self._query_ids)}"
        self._queries.add(query_id)
        message = self._message_json(self._messages[chat_id][message_id])
        self.inject_update({"callback_query": {"id": query_id, "from": from_user or DEFAULT_USER,
                                               "chat_instance": f"ci{chat_id}", "data": data,
                                               "message": message}})
        return query_id

    # ---- what tests look at ---------------------------------------------------------------------
    def calls_of(self, method: str) -> list[dict[str, Any]]:
        return [c.params for c in self.calls if c.method == method]

    def messages(self, chat_id: int, thread_id: int | None = None) -> list[ChatMessage]:
        shown = self._messages.get(chat_id, {}).values()
        return [m for m in shown if thread_id is None or m.thread_id == thread_id]

    def bot_texts(self, chat_id: int, thread_id: int | None = None) -> list[str]:
        """The bot's messages in this chat (or topic), in order, as they read now."""
        return [m.text for m in self.messages(chat_id, thread_id) if m.from_bot]

    async def wait_until(self, predicate: Callable[[], bool], within: float = 5.0) -> None:
        deadline = time.monotonic() + within
        while not predicate():
            if time.monotonic() > deadline:
                raise AssertionError(f"condition not met in {within}s; calls: {[c.method for c in self.calls]}")
            await asyncio.sleep(0.01)

    async def quiet(self, settle: float = 0.3, within: float = 10.0) -> None:
        """For negative checks: every update was taken and confirmed (polling) or posted (webhook), no
        call is being answered, and the bot has made none for `settle` seconds since."""
        await self.wait_until(lambda: self.updates.unconfirmed == 0 and not self._tasks and not self._in_flight
                              and time.monotonic() - self._last_request >= settle, within)

    # ---- HTTP plumbing --------------------------------------------------------------------------
    async def _handle(self, request: web.Request) -> web.Response:
        if request.match_info["token"] != self.token:
            return _error(ApiError(401, "Unauthorized"))
        method = request.match_info["method"]
        if request.content_type == "application/json":
            params = await request.json()
        else:
            form = await request.post()
            params = decode_form(form)
            params.update({f"_file:{k}": (v.filename, v.file.read()) for k, v in form.items()
                           if isinstance(v, web.FileField)})
        self.calls.append(Call(method, params))
        polling = method == "getUpdates"
        self._in_flight += not polling
        self._polls += polling
        self.overlapping_polls += polling and self._polls > 1  # Telegram allows one poller per bot
        try:
            return await self._answer(method, params)
        finally:
            self._in_flight -= not polling
            self._polls -= polling
            self._last_request = time.monotonic()

    async def _answer(self, method: str, params: dict[str, Any]) -> web.Response:
        handler = getattr(self, f"_m_{method}", None)
        try:
            if handler is None:
                raise ApiError(404, "Not Found")
            self._scripted_failure(method, params)
            for matches, gate in self._holds:
                if matches(method, params) and not gate.is_set():
                    self.held.append(Call(method, params))
                    await gate.wait()
            return web.json_response({"ok": True, "result": await handler(params)})
        except ApiError as e:
            return _error(e)
        except Rejected as e:
            return _error(ApiError(400, str(e)))
        except (KeyError, TypeError, ValueError, AttributeError) as e:
            return _error(ApiError(400, f"Bad Request: invalid parameters ({type(e).__name__}: {e})"))

    def _scripted_failure(self, method: str, params: dict[str, Any]) -> None:
        chat_id = params.get("chat_id")
        for failure in self._failures:
            if failure.method == method and failure.chat_id in (None, chat_id):
                failure.times -= 1
                if failure.times <= 0:
                    self._failures.remove(failure)
                raise ApiError(failure.status, failure.description, failure.retry_after)
        if chat_id in self._blocked:
            raise ApiError(403, "Forbidden: bot was blocked by the user")

    def _spawn(self, coro: Any) -> asyncio.Task[None]:
        task = asyncio.create_task(coro)
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)
        return task

    # ---- Bot API methods ------------------------------------------------------------------------
    async def _m_getMe(self, p: dict[str, Any]) -> dict[str, Any]:
        return self.bot_user

    async def _m_setMyCommands(self, p: dict[str, Any]) -> bool:
        self.commands[(_scope(p), p.get("language_code", ""))] = check_commands(p["commands"])
        return True

    async def _m_getMyCommands(self, p: dict[str, Any]) -> list[dict[str, str]]:
        return self.commands.get((_scope(p), p.get("language_code", "")), [])

    async def _m_sendChatAction(self, p: dict[str, Any]) -> bool:
        self._chat(p)
        if p.get("action") not in CHAT_ACTIONS:
            raise ApiError(400, "Bad Request: wrong parameter action in request")
        return True

    async def _m_answerCallbackQuery(self, p: dict[str, Any]) -> bool:
        query_id = p.get("callback_query_id")
        if query_id not in self._queries or query_id in self.answered:
            raise ApiError(400, "Bad Request: query is too old and response timeout expired or query ID is invalid")
        self.answered.append(query_id)
        return True

    async def _m_sendMessage(self, p: dict[str, Any]) -> dict[str, Any]:
        chat = self._chat(p)
        text, entities = visible_text(p.get("text"), p.get("parse_mode"))
        thread_id = p.get("message_thread_id")
        if thread_id is not None and not chat.get("is_forum"):
            raise ApiError(400, "Bad Request: message thread not found")
        reply_to = (p.get("reply_parameters") or {}).get("message_id")
        if reply_to is not None and reply_to not in self._messages[chat["id"]]:
            if not p["reply_parameters"].get("allow_sending_without_reply"):
                raise ApiError(400, "Bad Request: message to be replied not found")
            reply_to = None
        markup = check_markup(p.get("reply_markup"))
        self._take_flood(chat["id"], new_message=True)
        message = ChatMessage(chat["id"], self._next_message_id(chat["id"]), True, text, thread_id,
                              p["text"], entities, markup, reply_to)
        self._messages[chat["id"]][message.message_id] = message
        self.ended(chat["id"], message.message_id)
        return self._message_json(message)

    async def _m_sendPhoto(self, p: dict[str, Any]) -> dict[str, Any]:
        return self._file_message("sendPhoto", "photo", p)

    async def _m_sendDocument(self, p: dict[str, Any]) -> dict[str, Any]:
        return self._file_message("sendDocument", "document", p)

    async def _m_sendVoice(self, p: dict[str, Any]) -> dict[str, Any]:
        """Telegram shows OGG/Opus as a voice message (other formats arrive as a file): stricter, it refuses them."""
        voice = p.get("_file:voice")
        if voice is not None and not (voice[1].startswith(b"OggS") and b"OpusHead" in voice[1][:200]):
            raise ApiError(400, "Bad Request: voice must be an OGG file encoded with OPUS")
        return self._file_message("sendVoice", "voice", p)

    def _file_message(self, method: str, field: str, p: dict[str, Any]) -> dict[str, Any]:
        chat = self._chat(p)
        upload = self._upload(method, field, p)
        self._take_flood(chat["id"], new_message=True)
        self.uploads.append(upload)
        message = ChatMessage(chat["id"], self._next_message_id(chat["id"]), True, upload.caption or "",
                              p.get("message_thread_id"), upload.caption or "")
        self._messages[chat["id"]][message.message_id] = message
        self.ended(chat["id"], message.message_id)
        return self._message_json(message)

    async def _m_editMessageText(self, p: dict[str, Any]) -> dict[str, Any]:
        chat = self._chat(p)
        message = self._messages[chat["id"]].get(p.get("message_id", -1))
        if message is None:
            raise ApiError(400, "Bad Request: message to edit not found")
        if not message.from_bot:
            raise ApiError(400, "Bad Request: message can't be edited")
        text, entities = visible_text(p.get("text"), p.get("parse_mode"))
        markup = check_markup(p.get("reply_markup"))
        if (text, entities, markup) == (message.text, message.entities, message.reply_markup):
            raise ApiError(400, "Bad Request: message is not modified: specified new message content and "
                                "reply markup are exactly the same as a current content and reply markup "
                                "of the message")
        self._take_flood(chat["id"], new_message=False)
        message.text, message.entities, message.reply_markup, message.raw = text, entities, markup, p["text"]
        message.edits += 1
        return self._message_json(message)

    # ---- helpers --------------------------------------------------------------------------------
    def _chat(self, p: dict[str, Any]) -> dict[str, Any]:
        chat = self._chats.get(p.get("chat_id"))  # type: ignore[arg-type]
        if chat is None:
            raise ApiError(400, "Bad Request: chat not found")
        return chat

    def _take_flood(self, chat_id: int, new_message: bool) -> None:
        if self.judge.check(chat_id, new_message) is not None:
            self.breach("flood limits", chat_id)
        if self.flood is not None and (retry_after := self.flood.check(chat_id, new_message)) is not None:
            raise ApiError(429, f"Too Many Requests: retry after {retry_after}", retry_after)

    def _next_message_id(self, chat_id: int) -> int:
        self._last_ids[chat_id] = self._last_ids.get(chat_id, 0) + 1
        return self._last_ids[chat_id]

    def _message_json(self, m: ChatMessage) -> dict[str, Any]:
        out: dict[str, Any] = {"message_id": m.message_id, "date": int(time.time()), "chat": self._chats[m.chat_id],
                               "from": self.bot_user if m.from_bot else DEFAULT_USER, "text": m.text}
        if m.thread_id is not None:
            out["message_thread_id"], out["is_topic_message"] = m.thread_id, True
        if m.reply_markup:
            out["reply_markup"] = m.reply_markup
        if m.edits:
            out["edit_date"] = int(time.time())
        return out


def _error(e: ApiError) -> web.Response:
    body: dict[str, Any] = {"ok": False, "error_code": e.status, "description": e.description}
    if e.retry_after is not None:
        body["parameters"] = {"retry_after": e.retry_after}
    return web.json_response(body, status=e.status)


def _scope(p: dict[str, Any]) -> str:
    return str((p.get("scope") or {}).get("type", "default"))
