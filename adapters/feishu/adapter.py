"""Feishu/Lark adapter: long connection (default) or webhook in, cards out — all on the hub's loop.

An event (a webhook body once opened, or a long-connection frame) is parsed at once and handed to a
task; dedupe, chat lookups and the hub run there, so the webhook or the frame is answered well inside
Feishu's 3 s. No lark-oapi at run time: importing it costs ~160 MB (see longconn.py for the protocol).
"""

from __future__ import annotations

import asyncio
import dataclasses
import json
import logging
from collections.abc import Coroutine, Mapping
from typing import Any

import aiohttp
from aiohttp import web

from adapters.feishu import FeishuConfig, crypto, inbound
from adapters.feishu.files import FeishuFiles
from adapters.feishu.longconn import LongConnection, Refused
from adapters.feishu.outbound import FeishuOutbound
from adapters.feishu.transport import ApiError, FeishuHttp, refused, resolve_domain
from bot.adapter import AdapterServices, Capabilities, MessageHandler, NotKept
from bot.config import ConfigError, proxy_for
from bot.messages import ChatRef, IncomingMessage, Overheard, SentRef
from bot.replies import Reply

STOP_GRACE = 2.0  # seconds in-flight events get to reach the hub at stop
log = logging.getLogger(__name__)

HANDLED_EVENTS = frozenset({"im.message.receive_v1", "card.action.trigger", "application.bot.menu_v6"})
TOAST = {"en": "Running {action}", "zh": "正在执行 {action}"}


class FeishuAdapter:
    name = "feishu"
    # ~8000 characters keeps a card under Feishu's 30 KB even for CJK (3 bytes each); send() still
    # measures bytes and splits again. Card updates are allowed 5/s (PATCH) and 10/s (CardKit); one every
    # 0.5 s lets an answer written within ≈ 0.52 s (the 20 ms first-send wait + interval) cost its card and
    # one final PATCH, and the typewriter animates the text between updates.
    capabilities = Capabilities(
        max_text=8000,
        can_edit=True,
        edit_interval=0.5,
        group_edit_interval=0.5,
        buttons=True,
        feedback=False,  # no native feedback control: answers keep their look
        groups=True,
        overhears=True,
        refuses_sends=True,
        tree_budget=6000,
        burst=5,
        rate=5.0,
        group_send_window=(5, 1.0),  # Feishu allows about 5 messages/s into one group, shared by all its bots
        chat_send_window=None,
        global_window=(50, 1.0),  # the app's send quota is 50/s
        edit_window=None,
        send_window=None,
        threads_paced_apart=False,  # a thread's messages count against its group
        interactions_paced_apart=False,
        replace_pressed=True,
        closes_streams=True,  # a streaming card shows its typing cursor until the final edit
        restart_when_down=True,
        reorders=True,
        columns=4,
    )

    def __init__(
        self,
        *,
        http: FeishuHttp,
        app_id: str,
        app_secret: str,
        transport: str,
        services: AdapterServices,
        encrypt_key: str = "",
        verification_token: str = "",
    ) -> None:
        self._http = http
        self._app_id, self._app_secret = app_id, app_secret
        self._transport = transport
        self._services = services
        self._encrypt_key, self._verification_token = encrypt_key, verification_token
        self._outbound = FeishuOutbound(http)
        self.files = FeishuFiles(http, self._outbound)
        self._bot_open_id = ""
        self._on_message: MessageHandler | None = None
        self._tasks: set[asyncio.Task[None]] = set()
        self._ws: LongConnection | None = None
        self._route_ready = False

    # ---- lifecycle -----------------------------------------------------------------------------
    async def start(self, on_message: MessageHandler) -> None:
        await self._disconnect()  # a restart by the watchdog begins from a clean slate
        try:
            await self._http.start()
            info = await self._http.call("GET", "/open-apis/bot/v3/info")
        except ApiError as e:
            await self._http.close()
            raise ConfigError(f"Feishu: {refused(self._http.base_url, e)}") from e
        except (aiohttp.ClientError, TimeoutError) as e:
            await self._http.close()
            raise ConnectionError(f"cannot reach Feishu at {self._http.base_url}: {e}") from e
        bot = info.get("bot")
        self._bot_open_id = str(bot.get("open_id", "")) if isinstance(bot, dict) else ""
        if not self._bot_open_id:
            log.warning("feishu: bot/v3/info gave no open_id; @mentions in groups will not be recognised")
        self._on_message = on_message
        if self._transport == "websocket":
            self._ws = LongConnection(self._http, self._app_id, self._app_secret, self._on_frame)
            try:
                await self._ws.start()
            except Refused as e:
                await self.stop()
                raise ConnectionError(f"Feishu refused the long connection: {e}") from e

    async def stop(self) -> None:
        # Events already taken in may be marked seen: let them reach the hub (a hand-over is quick)
        # rather than cancel them and lose them; only what hangs is cancelled.
        if self._tasks:
            _, hanging = await asyncio.wait(set(self._tasks), timeout=STOP_GRACE)
            for task in hanging:
                task.cancel()
            await asyncio.gather(*hanging, return_exceptions=True)
        self._on_message = None
        await self._disconnect()

    async def _disconnect(self) -> None:
        if self._ws is not None:
            await self._ws.stop()
            self._ws = None
        await self._http.close()

    def connected(self) -> bool:
        if self._transport == "websocket":
            return self._ws is not None and self._ws.is_connected()
        return self._route_ready and self._on_message is not None

    # ---- outbound ------------------------------------------------------------------------------
    async def send(self, chat: ChatRef, reply: Reply, *, final: bool = True) -> SentRef:
        return await self._outbound.send(chat, reply, final=final)

    async def edit(self, ref: SentRef, reply: Reply, *, final: bool) -> None:
        await self._outbound.edit(ref, reply, final=final)

    async def typing(self, chat: ChatRef) -> None:
        """Feishu has no typing indicator for bots; the streaming card shows progress instead."""

    # ---- webhook -------------------------------------------------------------------------------
    def mark_route_ready(self) -> None:
        self._route_ready = True

    async def handle_webhook(self, request: web.Request) -> web.StreamResponse:
        body = await request.read()
        try:
            event = crypto.open_envelope(body, request.headers, self._encrypt_key, self._verification_token)
        except crypto.Rejected as e:
            log.warning("feishu: webhook rejected: %s", e)
            return web.json_response({"msg": "rejected"}, status=401)
        kind = crypto.event_type(event)
        if kind == "url_verification":
            return web.json_response({"challenge": event.get("challenge", "")})
        if kind not in HANDLED_EVENTS:
            return web.json_response({"msg": "success"})  # acknowledged, so Feishu does not retry
        if self._on_message is None:
            return web.json_response({"msg": "starting"}, status=503)  # Feishu retries later
        try:
            answer = await self._take_in(event)
        except Exception:
            log.exception("feishu: webhook event not kept; Feishu retries it")
            return web.json_response({"msg": "not kept"}, status=503)
        return web.json_response(answer or {"msg": "success"})

    # ---- events, parsed at once; the work goes to a task -------------------------------------------
    async def _on_frame(self, payload: bytes) -> dict[str, Any] | None:
        """A long-connection event (plaintext JSON); what it returns is the callback's answer."""
        try:
            event = json.loads(payload)
        except ValueError:
            log.warning("feishu: long-connection event is not JSON; skipped")
            return None
        return await self._take_in(event) if isinstance(event, dict) else None

    async def _take_in(self, event: dict[str, Any]) -> dict[str, Any] | None:
        """Route an event and return once its work is in the hub's inbox: Feishu gets its acknowledgement (the
        webhook's 200, the frame's answer) only then, and pushes the event again if we died before."""
        before = set(self._tasks)
        answer = self._route(event)
        await asyncio.gather(*(self._tasks - before))
        return answer

    def _route(self, event: dict[str, Any]) -> dict[str, Any] | None:
        """Hand a decoded event to the hub; a card press answers with a toast. Unknown kinds are ignored."""
        kind = crypto.event_type(event)
        try:
            if kind == "im.message.receive_v1":
                message = inbound.parse_message(event, self._bot_open_id)
                if isinstance(message, Overheard):  # kept once per message id by the hub: no dedupe round trip
                    self._spawn(self._overhear(message))
                elif message is not None:
                    self._spawn(self._deliver(message.event_id, message.message))
            elif kind == "application.bot.menu_v6":
                parsed = inbound.parse_menu(event)
                if parsed is not None:  # answered in the user's one-to-one chat, once we know which that is
                    menu = parsed.message
                    direct = dataclasses.replace(menu, chat_id=self._outbound.direct_chat(menu.user_id))
                    self._spawn(self._deliver(parsed.event_id, direct))
            elif kind == "card.action.trigger":
                press = inbound.parse_card_action(event)
                if press is None:
                    return {}
                self._spawn(self._deliver_press(press))
                text = TOAST.get(self._services.language, TOAST["en"]).format(action=press.action)
                return {"toast": {"type": "info", "content": text}}
        except Exception:
            log.exception("feishu: unreadable %s event skipped", kind)
        return None

    def _spawn(self, work: Coroutine[Any, Any, None]) -> None:
        task = asyncio.get_running_loop().create_task(work)
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    # ---- on the hub's loop ---------------------------------------------------------------------
    async def _deliver(self, event_id: str, msg: IncomingMessage) -> None:
        """Raises when the hub did not keep it: Feishu gets no acknowledgement and pushes it again."""
        async def hand_over() -> None:
            self._outbound.remember_inbound(msg)
            await self._hand(msg)

        if not await self._services.once(f"feishu:event:{event_id}", hand_over):
            log.info("feishu: redelivered event %s ignored", event_id)

    async def _hand(self, msg: IncomingMessage) -> None:
        if self._on_message is None:
            raise NotKept("feishu adapter is stopping")
        await self._on_message(msg)

    async def _overhear(self, heard: Overheard) -> None:
        try:
            if self._on_message is not None:
                await self._on_message(heard)
        except Exception:
            log.exception("feishu: keeping group message %s as context failed", heard.message_id)

    async def _deliver_press(self, press: inbound.CardPress) -> None:
        async def hand_over() -> None:
            is_group, thread_id = await self._outbound.chat_of_card(press.chat_id, press.card_message_id)
            await self._hand(press.to_message(is_group, thread_id))

        await self._services.once(f"feishu:event:{press.event_id}", hand_over)


def create(settings: FeishuConfig, env: Mapping[str, str], services: AdapterServices) -> FeishuAdapter:
    """Build the adapter; secrets come only from `env`. Webhook mode registers its route here."""
    app_id, app_secret = env.get("FEISHU_APP_ID", ""), env.get("FEISHU_APP_SECRET", "")
    if not app_id or not app_secret:
        raise ConfigError("Feishu needs FEISHU_APP_ID and FEISHU_APP_SECRET (developer console → Credentials).")
    try:
        base_url = resolve_domain(env.get("FEISHU_DOMAIN") or settings.domain)
    except ValueError as e:
        raise ConfigError(str(e)) from e
    encrypt_key = env.get("FEISHU_ENCRYPT_KEY", "")
    verification_token = env.get("FEISHU_VERIFICATION_TOKEN", "")
    transport = settings.transport
    if transport == "webhook" and not (encrypt_key or verification_token):
        raise ConfigError(
            "Feishu webhook mode needs FEISHU_ENCRYPT_KEY and/or FEISHU_VERIFICATION_TOKEN "
            "(developer console → Events & Callbacks → Encryption Strategy) so forged events are refused."
        )
    if transport == "webhook" and not encrypt_key:
        log.warning("feishu: the webhook has no FEISHU_ENCRYPT_KEY, so events are neither encrypted nor signed and "
                    "only the verification token guards the route; set an Encrypt Key in the developer console")
    adapter = FeishuAdapter(
        http=FeishuHttp(base_url, app_id, app_secret, proxy=proxy_for(base_url, env)),
        app_id=app_id,
        app_secret=app_secret,
        transport=transport,
        services=services,
        encrypt_key=encrypt_key,
        verification_token=verification_token,
    )
    if transport == "webhook":
        services.add_route("POST", settings.webhook_path, adapter.handle_webhook)
        adapter.mark_route_ready()
    return adapter


async def doctor(settings: FeishuConfig, env: Mapping[str, str]) -> str:
    """For `bothub doctor`: do the app credentials get a tenant token and the bot's identity?"""
    app_id, app_secret = env.get("FEISHU_APP_ID", ""), env.get("FEISHU_APP_SECRET", "")
    if not app_id or not app_secret:
        raise ConfigError("FEISHU_APP_ID and FEISHU_APP_SECRET must both be set")
    base_url = resolve_domain(env.get("FEISHU_DOMAIN") or settings.domain)
    http = FeishuHttp(base_url, app_id, app_secret, proxy=proxy_for(base_url, env))
    try:
        await http.start()
        info = await http.call("GET", "/open-apis/bot/v3/info")
    except ApiError as e:
        raise ConfigError(refused(http.base_url, e)) from e
    finally:
        await http.close()
    bot = info.get("bot") or {}
    return f"app accepted, bot {bot.get('app_name') or bot.get('open_id') or '?'}"
