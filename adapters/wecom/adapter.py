"""WeCom AI-bot adapter: the long connection (default) or encrypted callbacks in, stream messages and
template cards out — all on the hub's loop.

Messages are deduplicated by msgid before they reach the hub (WeCom pushes a message again when it doubts
it arrived); a welcome answers a user entering the bot's chat, zh first.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from typing import Any

import aiohttp
from aiohttp import web

from adapters.wecom import WeComConfig, inbound
from adapters.wecom.callback import CallbackMode
from adapters.wecom.crypto import CryptoError
from adapters.wecom.files import WeComFiles
from adapters.wecom.longconn import AckError, LongConnection, Refused
from adapters.wecom.outbound import WeComOutbound
from adapters.wecom.render import MAX_CHARS
from bot.adapter import AdapterServices, Capabilities, MessageHandler
from bot.config import ConfigError
from bot.i18n import t
from bot.messages import ChatRef, IncomingMessage, SentRef
from bot.replies import Reply

log = logging.getLogger(__name__)

WS_URL = "wss://openws.work.weixin.qq.com"


class WeComAdapter:
    name = "wecom"
    # a stream refreshed once a second reads as typing without flooding. WeCom's long-connection page
    # (智能机器人长连接) limits what reaches one conversation, replies and pushes together, to 30 messages a minute
    # (and 1 000 an hour), single chats as much as groups; a refresh of a stream (the same stream.id) updates its
    # message and is no new one. It publishes no rate per bot: the global window is the only bot-wide figure WeCom
    # gives, an enterprise's 10 000 calls a minute to one API.
    capabilities = Capabilities(
        max_text=MAX_CHARS,
        can_edit=True,
        edit_interval=1.0,
        group_edit_interval=1.0,
        buttons=True,
        feedback=False,  # no native feedback control: answers keep their look
        groups=True,
        overhears=False,  # the bot receives group messages only when @mentioned
        refuses_sends=True,
        tree_budget=4000,
        burst=10,  # WeCom counts no refreshes: the chat's bucket only keeps its frames near the streams' own pace
        rate=2.0,
        group_send_window=None,  # the per-conversation rule below covers groups
        chat_send_window=(30, 60.0),
        global_window=(10_000, 60.0),
        edit_window=None,
        send_window=None,
        threads_paced_apart=False,
        interactions_paced_apart=False,
        replace_pressed=True,
        closes_streams=True,  # a stream shows "typing" until `finish`
        restart_when_down=True,
        reorders=False,  # no order key parsed yet (IncomingMessage.order): nothing to hold for
        columns=0,
    )

    def __init__(self, *, settings: WeComConfig, env: Mapping[str, str], services: AdapterServices) -> None:
        self._settings, self._env, self._services = settings, env, services
        self._session: aiohttp.ClientSession | None = None
        self._conn: LongConnection | None = None
        self._outbound: WeComOutbound | None = None
        self._files: WeComFiles | None = None
        self._on_message: MessageHandler | None = None
        self.callback: CallbackMode | None = None

    @property
    def files(self) -> WeComFiles | None:
        return self._files

    async def start(self, on_message: MessageHandler) -> None:
        await self.stop()
        self._session = aiohttp.ClientSession(timeout=aiohttp.ClientTimeout(total=60))
        self._on_message = on_message
        if self.callback is not None:
            self.callback.session = self._session
            self._files = WeComFiles(self._session, None, self._services.max_file_bytes)
            return
        conn = LongConnection(self._session, ws_url(self._settings, self._env), self._env["WECOM_BOT_ID"],
                              self._env["WECOM_BOT_SECRET"], self._take_frame)
        self._outbound = WeComOutbound(conn)
        self._files = WeComFiles(self._session, self._outbound, self._services.max_file_bytes)
        try:
            await conn.start()
        except Refused as e:
            await self.stop()
            raise ConfigError(f"WeCom refused the bot: {e}; check WECOM_BOT_ID / WECOM_BOT_SECRET") from e
        except (aiohttp.ClientError, OSError, TimeoutError, ConnectionError) as e:
            await self.stop()
            raise ConnectionError(f"cannot open WeCom's long connection: {e}") from e
        self._conn = conn

    async def stop(self) -> None:
        self._on_message = None
        if self._conn is not None:
            await self._conn.stop()
            self._conn = None
        if self._session is not None:
            await self._session.close()
            self._session = None

    def connected(self) -> bool:
        if self.callback is not None:
            return self._on_message is not None
        return self._conn is not None and self._conn.is_connected()

    async def send(self, chat: ChatRef, reply: Reply, *, final: bool = True) -> SentRef:
        if self.callback is not None:
            return await self.callback.send(chat, reply, final=final)
        return await self._out().send(chat, reply, final=final)

    async def edit(self, ref: SentRef, reply: Reply, *, final: bool) -> None:
        if self.callback is not None:
            await self.callback.edit(ref, reply, final=final)
            return
        await self._out().edit(ref, reply, final=final)

    async def typing(self, chat: ChatRef) -> None:
        """WeCom has no typing indicator; an open stream shows progress instead."""

    def _out(self) -> WeComOutbound:
        if self._outbound is None:
            raise ConnectionError("wecom adapter is not started")
        return self._outbound

    # ---- inbound -------------------------------------------------------------------------------
    async def _take_frame(self, frame: dict[str, Any]) -> None:
        body = frame.get("body")
        rid = str((frame.get("headers") or {}).get("req_id", ""))
        if not isinstance(body, dict) or not rid:
            return
        if frame.get("cmd") == "aibot_msg_callback":
            await self.take_message(body, rid)
        else:
            await self.take_event(body, rid)

    async def take_message(self, body: dict[str, Any], rid: str) -> inbound.Parsed | None:
        """Hands a message to the hub once; returns it (None when skipped or a redelivery)."""
        parsed = inbound.parse_message(body)
        if parsed is None:
            log.info("wecom: a message with nothing to answer skipped")
            return None
        msg = parsed.message
        self._ready()

        async def hand_over() -> None:
            if self._outbound is not None:
                self._outbound.remember(msg.message_id, rid)
            if self._files is not None:
                self._files.remember(msg.message_id, parsed.media)
            await self._hand_over(msg)

        if not await self._services.once(f"wecom:msg:{msg.message_id}", hand_over):
            log.info("wecom: redelivered message %s ignored", msg.message_id)
            return None
        return parsed

    async def take_event(self, body: dict[str, Any], rid: str) -> inbound.Event | None:
        event = inbound.parse_event(body)
        if event is None or not event.msgid:
            return None
        self._ready()

        async def hand_over() -> None:
            if event.kind == "enter_chat" and self._conn is not None:
                welcome = {"msgtype": "text", "text": {"content": self.welcome()}}
                try:
                    await self._conn.request("aibot_respond_welcome_msg", welcome, rid)
                except (AckError, ConnectionError, TimeoutError) as e:
                    log.warning("wecom: the welcome was refused: %s", e)
            elif event.kind == "template_card_event" and event.event_key and event.chat_id:
                await self._hand_over(event.press(rid))

        return event if await self._services.once(f"wecom:event:{event.msgid}", hand_over) else None

    def welcome(self) -> str:
        """Chinese first, then the hub's own language when that is another."""
        zh = t("zh", "welcome")
        return zh if self._services.language == "zh" else f"{zh}\n\n{t(self._services.language, 'welcome')}"

    def _ready(self) -> None:
        """Checked before the message is marked seen, so a refused one is taken when it comes again."""
        if self._on_message is None:
            raise ConnectionError("wecom adapter is stopping")

    async def _hand_over(self, msg: IncomingMessage) -> None:
        self._ready()
        assert self._on_message is not None
        await self._on_message(msg)

    # ---- callback mode -------------------------------------------------------------------------
    async def handle_callback(self, request: web.Request) -> web.StreamResponse:
        assert self.callback is not None
        return await self.callback.handle(request, self)


def ws_url(settings: WeComConfig, env: Mapping[str, str]) -> str:
    url = env.get("WECOM_WS_URL") or settings.ws_url or WS_URL
    if not url.startswith(("wss://", "ws://")):
        raise ConfigError(f"wecom ws_url must be a ws:// or wss:// URL, not {url!r}")
    return url


def _require(env: Mapping[str, str], *names: str) -> None:
    missing = [name for name in names if not env.get(name)]
    if missing:
        raise ConfigError(f"WeCom needs {', '.join(missing)} (admin console → AI Bot → the bot → API mode).")


def _callback_mode(env: Mapping[str, str]) -> CallbackMode:
    _require(env, "WECOM_TOKEN", "WECOM_ENCODING_AES_KEY")
    try:
        return CallbackMode(env["WECOM_TOKEN"], env["WECOM_ENCODING_AES_KEY"])
    except CryptoError as e:
        raise ConfigError(f"WECOM_ENCODING_AES_KEY: {e}") from e


def create(settings: WeComConfig, env: Mapping[str, str], services: AdapterServices) -> WeComAdapter:
    """Build the adapter; secrets come only from `env`. Callback mode registers its route here."""
    adapter = WeComAdapter(settings=settings, env=env, services=services)
    if settings.transport == "callback":
        adapter.callback = _callback_mode(env)
        services.add_route("GET", settings.callback_path, adapter.handle_callback)
        services.add_route("POST", settings.callback_path, adapter.handle_callback)
    else:
        _require(env, "WECOM_BOT_ID", "WECOM_BOT_SECRET")
        ws_url(settings, env)
    return adapter


async def doctor(settings: WeComConfig, env: Mapping[str, str]) -> str:
    """For `bothub doctor`: does WeCom take the bot's subscription (long connection), or is the callback
    key a real EncodingAESKey?"""
    if settings.transport == "callback":
        _callback_mode(env)
        return "callback token and EncodingAESKey are well formed"
    _require(env, "WECOM_BOT_ID", "WECOM_BOT_SECRET")

    async def ignore(_frame: dict[str, Any]) -> None:
        return None

    async with aiohttp.ClientSession(timeout=aiohttp.ClientTimeout(total=20)) as session:
        conn = LongConnection(session, ws_url(settings, env), env["WECOM_BOT_ID"], env["WECOM_BOT_SECRET"], ignore)
        try:
            await conn.start()
        except Refused as e:
            raise ConfigError(f"WeCom refused the bot: {e}") from e
        finally:
            await conn.stop()
    # WeCom keeps one connection per bot: a running bot is displaced by this check and reconnects
    return f"bot {env['WECOM_BOT_ID']} subscribed on the long connection (a running bot reconnects shortly)"
