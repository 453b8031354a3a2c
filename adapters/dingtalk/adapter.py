"""DingTalk adapter: robot messages by Stream mode (default) or signed HTTP callbacks, AI cards out — all on
the hub's loop.

A frame is acknowledged (by the SDK, stream.py) only once its message is in the hub's inbox, so a message
taken in just before a crash is pushed again; redeliveries are dropped by msgId.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Mapping
from typing import Any

import aiohttp
from aiohttp import web

from adapters.dingtalk import DingTalkConfig, callback, inbound
from adapters.dingtalk.files import DingTalkFiles
from adapters.dingtalk.outbound import DingTalkOutbound
from adapters.dingtalk.render import MAX_CHARS
from adapters.dingtalk.transport import API_BASE, OAPI_BASE, ApiError, DingTalkHttp
from bot.adapter import AdapterServices, Capabilities, MessageHandler
from bot.config import ConfigError, proxy_for
from bot.messages import ChatRef, IncomingMessage, SentRef
from bot.replies import Reply

log = logging.getLogger(__name__)


class DingTalkAdapter:
    name = "dingtalk"
    # AI card updates every 0.5 s: a typewriter without flooding; a robot may post 20 messages a minute into one
    # group. DingTalk limits an app's server API calls per app *and per interface* (20 a second on the standard
    # edition, HTTP 403 QpsLimitForAppkeyAndApi), so new messages (card/instances/createAndDeliver, or the robot
    # send APIs when cards are off) and edits (card/streaming, the whole-card PUT) each have a window of their own;
    # over all interfaces only the per-IP limit applies (10 000 calls in 20 s).
    capabilities = Capabilities(
        max_text=MAX_CHARS,
        can_edit=True,
        edit_interval=0.5,
        group_edit_interval=0.5,
        buttons=True,
        feedback=False,  # no native feedback control: answers keep their look
        groups=True,
        overhears=False,  # a robot receives group messages only when @mentioned
        refuses_sends=True,
        tree_budget=4000,
        burst=5,
        rate=2.0,
        group_send_window=(20, 60.0),
        chat_send_window=None,
        global_window=(10_000, 20.0),
        edit_window=(20, 1.0),
        send_window=(20, 1.0),
        threads_paced_apart=False,
        interactions_paced_apart=False,
        replace_pressed=True,
        closes_streams=True,  # an AI card shows "typing" until it is FINISHED
        restart_when_down=True,
        reorders=False,  # no order key parsed yet (IncomingMessage.order): nothing to hold for
        columns=0,
    )

    def __init__(self, *, http: DingTalkHttp, client_secret: str, transport: str, template: str,
                 services: AdapterServices) -> None:
        self._http = http
        self._secret = client_secret
        self._transport = transport
        self._services = services
        callback_type = "STREAM" if transport == "stream" else "HTTP"
        self._outbound = DingTalkOutbound(http, template, callback_type)
        self.files = DingTalkFiles(http, self._outbound)
        self._on_message: MessageHandler | None = None
        self._stream: Any = None  # a stream.StreamConnection; imported with the SDK only in stream mode
        self._route_ready = False

    async def start(self, on_message: MessageHandler) -> None:
        await self._disconnect()
        try:
            await self._http.start()
        except ApiError as e:
            await self._http.close()
            raise ConfigError(f"DingTalk refused the app: {e.msg} ({e.code}); check DINGTALK_CLIENT_ID / "
                              "DINGTALK_CLIENT_SECRET") from e
        except (aiohttp.ClientError, TimeoutError) as e:
            await self._http.close()
            raise ConnectionError(f"cannot reach DingTalk at {self._http.api_base}: {e}") from e
        self._on_message = on_message
        if self._transport == "stream":
            from adapters.dingtalk.stream import Refused, StreamConnection

            self._stream = StreamConnection(self._http, self._secret, self._take_robot, self._take_card)
            try:
                await self._stream.start()
            except Refused as e:
                await self.stop()
                raise ConnectionError(f"DingTalk refused the Stream connection: {e}") from e
            except (ApiError, aiohttp.ClientError, TimeoutError, OSError) as e:
                await self.stop()
                raise ConnectionError(f"cannot open DingTalk's Stream connection: {e}") from e

    async def stop(self) -> None:
        self._on_message = None
        await self._disconnect()

    async def _disconnect(self) -> None:
        if self._stream is not None:
            await self._stream.stop()
            self._stream = None
        await self._http.close()

    def connected(self) -> bool:
        if self._transport == "stream":
            return self._stream is not None and bool(self._stream.is_connected())
        return self._route_ready and self._on_message is not None

    async def send(self, chat: ChatRef, reply: Reply, *, final: bool = True) -> SentRef:
        return await self._outbound.send(chat, reply, final=final)

    async def edit(self, ref: SentRef, reply: Reply, *, final: bool) -> None:
        await self._outbound.edit(ref, reply, final=final)

    async def typing(self, chat: ChatRef) -> None:
        """DingTalk has no typing indicator for robots; the AI card shows progress instead."""

    # ---- inbound -------------------------------------------------------------------------------
    async def _take_robot(self, data: dict[str, Any], _frame_id: str = "") -> None:
        robot = inbound.parse_robot(data)
        if robot is None:
            log.info("dingtalk: a robot message with nothing to answer skipped")
            return
        msg = robot.message
        self._ready()

        async def hand_over() -> None:
            self._outbound.remember_webhook(msg.message_id, robot.webhook, robot.webhook_expires_ms)
            await self._hand_over(msg)

        if not await self._services.once(f"dingtalk:msg:{msg.message_id}", hand_over):
            log.info("dingtalk: redelivered message %s ignored", msg.message_id)

    async def _take_card(self, data: dict[str, Any], frame_id: str) -> None:
        press = inbound.parse_card_callback(data)
        if press is None:
            return
        self._ready()
        press_id = frame_id or f"{press.card_id}:{data.get('extension', '')}"
        chat = self._outbound.chat_of(press.card_id)
        await self._services.once(f"dingtalk:press:{press_id}", lambda: self._hand_over(press.to_message(
            press_id, chat.is_group if chat else None, chat.chat_id if chat else None)))

    def _ready(self) -> None:
        """Checked before the message is marked seen, so a refused one is delivered again, not dropped."""
        if self._on_message is None:
            raise ConnectionError("dingtalk adapter is stopping")  # not ACKed: DingTalk delivers it again

    async def _hand_over(self, msg: IncomingMessage) -> None:
        self._ready()
        assert self._on_message is not None
        await self._on_message(msg)

    # ---- HTTP callback mode --------------------------------------------------------------------
    def mark_route_ready(self) -> None:
        self._route_ready = True

    async def handle_callback(self, request: web.Request) -> web.StreamResponse:
        try:
            callback.check(request.headers, self._secret)
        except callback.Rejected as e:
            log.warning("dingtalk: callback rejected: %s", e)
            return web.json_response({"msg": "rejected"}, status=401)
        try:
            data = json.loads(await request.read())
        except ValueError:
            return web.json_response({"msg": "not JSON"}, status=400)
        if not isinstance(data, dict):
            return web.json_response({"msg": "not an object"}, status=400)
        if self._on_message is None:
            return web.json_response({"msg": "starting"}, status=503)  # DingTalk retries later
        try:
            if "outTrackId" in data:
                await self._take_card(data, str(request.headers.get("x-dingtalk-callback-id", "")))
            else:
                await self._take_robot(data)
        except Exception:  # not kept: DingTalk retries it
            log.exception("dingtalk: handling a callback failed")
            return web.json_response({"msg": "not kept"}, status=503)
        return web.json_response({})


def _bases(settings: DingTalkConfig, env: Mapping[str, str]) -> tuple[str, str]:
    api = env.get("DINGTALK_API_BASE") or settings.api_base or API_BASE
    oapi = env.get("DINGTALK_OAPI_BASE") or settings.oapi_base or OAPI_BASE
    for base in (api, oapi):
        if not base.startswith(("https://", "http://")):
            raise ConfigError(f"dingtalk api_base / oapi_base must be a URL, not {base!r}")
    return api, oapi


def _http(settings: DingTalkConfig, env: Mapping[str, str]) -> DingTalkHttp:
    client_id, secret = env.get("DINGTALK_CLIENT_ID", ""), env.get("DINGTALK_CLIENT_SECRET", "")
    if not client_id or not secret:
        raise ConfigError("DingTalk needs DINGTALK_CLIENT_ID and DINGTALK_CLIENT_SECRET "
                          "(developer console → the app → Credentials & Basic Info).")
    api, oapi = _bases(settings, env)
    return DingTalkHttp(api, oapi, client_id, secret, proxy=proxy_for(api, env))


def create(settings: DingTalkConfig, env: Mapping[str, str], services: AdapterServices) -> DingTalkAdapter:
    """Build the adapter; secrets come only from `env`. HTTP mode registers its route here."""
    http = _http(settings, env)
    adapter = DingTalkAdapter(http=http, client_secret=env["DINGTALK_CLIENT_SECRET"], transport=settings.transport,
                              template=settings.card_template, services=services)
    if settings.transport == "http":
        services.add_route("POST", settings.callback_path, adapter.handle_callback)
        adapter.mark_route_ready()
    return adapter


async def doctor(settings: DingTalkConfig, env: Mapping[str, str]) -> str:
    """For `bothub doctor`: do the app credentials get an access token?"""
    http = _http(settings, env)
    try:
        await http.start()
    except ApiError as e:
        raise ConfigError(f"DingTalk refused the app: {e.msg} ({e.code})") from e
    finally:
        await http.close()
    return f"app {http.client_id} accepted, access token issued"
