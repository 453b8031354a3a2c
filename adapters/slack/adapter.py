"""Slack adapter: slack_sdk's AsyncWebClient for the Web API; events by Socket Mode (the default: a WebSocket,
no public URL) or the Events API on the hub's server — both on the hub's loop.

Whichever way an event comes, it is acknowledged (the envelope's ack, the request's 200) only once it is in
the hub's inbox, so Slack delivers it again if we died before; the redelivery carries the same event id and
is dropped by the persisted dedupe.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections import OrderedDict
from collections.abc import Coroutine, Mapping
from typing import Any

import aiohttp
from slack_sdk.errors import SlackApiError
from slack_sdk.socket_mode.aiohttp import SocketModeClient
from slack_sdk.socket_mode.async_client import AsyncBaseSocketModeClient
from slack_sdk.socket_mode.request import SocketModeRequest
from slack_sdk.socket_mode.response import SocketModeResponse
from slack_sdk.web.async_client import AsyncWebClient

from adapters.slack import SlackConfig, assistant, inbound
from adapters.slack.events import EventsEndpoint, Verifier
from adapters.slack.files import SlackFiles
from adapters.slack.outbound import SlackOutbound, typed
from adapters.slack.responses import Responses
from bot.adapter import AdapterServices, Capabilities, MessageHandler, NotKept
from bot.config import ConfigError, proxy_for
from bot.httpkit.fence import fenced_trace
from bot.messages import ChatRef, IncomingMessage, Overheard, SentRef
from bot.replies import Reply

log = logging.getLogger("bothub.slack")
SLACK_API = "https://slack.com/api/"
STOP_GRACE = 2.0  # seconds in-flight events get to reach the hub at stop
PING_INTERVAL = 5.0  # seconds between Socket Mode pings (slack_sdk's default)
REMEMBERED_THREADS = 4096


class SlackAdapter:
    name = "slack"
    # 3000 characters: a section block's limit, so a part fits as plain text and beside buttons alike.
    # Slack allows about one new message per second per channel (threads included), short bursts above it;
    # chat.update is Tier 3 (50+/min per app and workspace), the stream's appends Tier 4, its stop Tier 3: every
    # edit counts against one window of 50 a minute, which keeps each of those methods inside its tier.
    capabilities = Capabilities(
        max_text=3000,
        can_edit=True,
        edit_interval=1.0,
        group_edit_interval=1.5,
        buttons=True,
        feedback=True,  # Block Kit's feedback_buttons under an answer (render.py)
        groups=True,
        overhears=True,
        refuses_sends=True,
        tree_budget=2800,
        burst=3,
        rate=1.0,
        group_send_window=None,
        chat_send_window=None,
        global_window=(300, 60.0),
        edit_window=(50, 60.0),
        send_window=None,
        threads_paced_apart=False,  # a thread's messages count against its channel
        interactions_paced_apart=False,
        replace_pressed=True,  # chat.update replaces the message holding the pressed button
        closes_streams=True,  # a native stream shows as being written until chat.stopStream
        restart_when_down=True,
        reorders=False,  # no order key parsed yet (IncomingMessage.order): nothing to hold for
        columns=0,
    )

    def __init__(self, settings: SlackConfig, tokens: tuple[str, str, str], services: AdapterServices,
                 api_base: str, proxy: str | None) -> None:
        self._settings = settings
        self._bot_token, self._app_token, signing_secret = tokens
        self._services = services
        self._api_base, self._proxy = api_base, proxy
        self._http: aiohttp.ClientSession | None = None
        self._web = AsyncWebClient(token=self._bot_token, base_url=api_base, proxy=proxy)
        self._team_id = self._bot_user = self._bot_id = ""
        self._outbound = SlackOutbound(self._web, lambda: self._team_id, settings.streaming,
                                       Responses(self._session, api_base))
        self.files = SlackFiles(self._outbound, self._bot_token, services.max_file_bytes, self._session)
        self._assistant = assistant.Assistant(self._web, services.language)
        self._threads: OrderedDict[tuple[str, str], bool] = OrderedDict()  # assistant thread → titled yet
        self._socket: SocketModeClient | None = None
        self._on_message: MessageHandler | None = None
        self._tasks: set[asyncio.Task[None]] = set()
        self._handing: dict[str, asyncio.Future[bool]] = {}  # dedupe key → its hand-over (kept?), while it runs
        self.endpoint = EventsEndpoint(Verifier(signing_secret), self._take_in, lambda: self._on_message is not None)\
            if signing_secret else None

    def _session(self) -> aiohttp.ClientSession:
        if self._http is None or self._http.closed:
            self._http = aiohttp.ClientSession(proxy=self._proxy, trace_configs=[fenced_trace()])  # the Web API's too
        return self._http

    # ---- lifecycle -------------------------------------------------------------------------------
    async def start(self, on_message: MessageHandler) -> None:
        await self._disconnect()  # a restart by the watchdog begins from a clean slate
        self._web.session = self._session()
        try:
            me = await self._web.auth_test()
        except SlackApiError as e:
            raise ConfigError(f"Slack refused SLACK_BOT_TOKEN: {e.response.get('error')}") from e
        except (aiohttp.ClientError, TimeoutError) as e:
            raise ConnectionError(f"cannot reach Slack at {self._api_base}: {e}") from e
        self._team_id, self._bot_user = str(me.get("team_id", "")), str(me.get("user_id", ""))
        self._bot_id = str(me.get("bot_id", ""))
        self._on_message = on_message
        if self._settings.mode == "socket":
            await self._open_socket()

    async def _open_socket(self) -> None:
        # the URL is fetched here, not by the client, so a refused app token fails start() instead of retrying
        try:
            opened = await self._web.apps_connections_open(app_token=self._app_token)
        except SlackApiError as e:
            raise ConfigError(f"Slack refused SLACK_APP_TOKEN for Socket Mode: {e.response.get('error')}") from e
        opener = AsyncWebClient(base_url=self._api_base, proxy=self._proxy)  # it sends the app token itself
        socket = SocketModeClient(self._app_token, web_client=opener, proxy=self._proxy, ping_interval=PING_INTERVAL,
                                  logger=logging.getLogger("slack_sdk.socket_mode"))
        socket.socket_mode_request_listeners.append(self._on_request)
        socket.wss_uri = str(opened["url"])
        self._socket = socket
        await socket.connect()  # type: ignore[no-untyped-call]

    async def stop(self) -> None:
        if self._tasks:  # events taken in may be marked seen: let them reach the hub rather than lose them
            _, hanging = await asyncio.wait(set(self._tasks), timeout=STOP_GRACE)
            for task in hanging:
                task.cancel()
            await asyncio.gather(*hanging, return_exceptions=True)
        self._on_message = None
        await self._disconnect()

    async def _disconnect(self) -> None:
        if self._socket is not None:
            socket, self._socket = self._socket, None
            with contextlib.suppress(Exception):
                await socket.close()  # type: ignore[no-untyped-call]
        if self._http is not None:
            await self._http.close()
            self._http = None

    def connected(self) -> bool:
        if self._settings.mode == "events":
            return self._on_message is not None
        session = self._socket.current_session if self._socket is not None else None
        return session is not None and not session.closed

    # ---- outbound --------------------------------------------------------------------------------
    async def send(self, chat: ChatRef, reply: Reply, *, final: bool = True) -> SentRef:
        self._assistant.answered(chat)
        return await self._outbound.send(chat, reply, final=final)

    async def edit(self, ref: SentRef, reply: Reply, *, final: bool) -> None:
        await self._outbound.edit(ref, reply, final=final)

    async def typing(self, chat: ChatRef) -> None:
        """Slack shows no typing for apps, except "is thinking…" in an assistant thread (the app's DM)."""
        if self._settings.assistant and chat.thread_id and inbound.is_direct(chat.chat_id):
            await self._assistant.thinking(chat)

    def streaming(self, ref: SentRef) -> bool:
        return self._outbound.streaming(ref)

    # ---- events, from the socket or the HTTP endpoint ------------------------------------------------
    async def _on_request(self, client: AsyncBaseSocketModeClient, request: SocketModeRequest) -> None:
        """In a task of slack_sdk's own, tracked like ours: a stop lets it reach the hub and ack before the socket
        closes (else Slack sends the envelope again)."""
        task = asyncio.current_task()
        assert task is not None  # slack_sdk runs every listener in a task
        self._tasks.add(task)
        try:
            answer = await self._take_in(request.type, request.payload)  # acked only once the inbox has it
            await client.send_socket_mode_response(SocketModeResponse(request.envelope_id, answer))
        except NotKept:  # Socket Mode has no NACK: the envelope goes unacked, and Slack sends it again
            log.warning("slack: envelope %s not kept; left unacked", request.envelope_id)
        finally:
            self._tasks.discard(task)

    async def _take_in(self, kind: str, payload: dict[str, Any]) -> dict[str, Any] | None:
        try:
            if kind == "events_api":
                await self._event(payload)
            elif kind == "slash_commands":
                command = inbound.parse_command(payload, self._settings.command)
                if command is not None:
                    self._outbound.responses.remember(command.message_id, payload.get("response_url"))
                    await self._deliver(f"slack:command:{command.message_id}", command)
            elif kind == "interactive":
                press = inbound.parse_action(payload)
                if press is not None:
                    self._outbound.responses.remember(press.message_id, payload.get("response_url"))
                    await self._deliver(f"slack:press:{press.message_id}", press)
        except NotKept:
            raise  # not acknowledged: Slack delivers it again
        except Exception:
            log.exception("slack: handling a %s envelope failed", kind)
        return None

    async def _event(self, payload: dict[str, Any]) -> None:
        event = payload.get("event")
        if not isinstance(event, dict):
            return
        parsed = inbound.parse_event(event, self._bot_user, self._bot_id)
        if isinstance(parsed, inbound.AssistantThread):
            self._remember_thread(parsed.channel, parsed.thread_ts)
            self._spawn(self._assistant.greet(parsed.channel, parsed.thread_ts))
        elif isinstance(parsed, Overheard):
            if self._on_message is not None:
                await self._on_message(parsed)
        elif parsed is not None:
            await self._deliver(f"slack:event:{payload.get('event_id') or parsed.chat_id + ':' + parsed.message_id}",
                                parsed)

    async def _deliver(self, key: str, msg: IncomingMessage) -> None:
        async def hand_over() -> None:
            kept = self._handing[key] = asyncio.get_running_loop().create_future()
            try:
                await self._hand_over(msg)
                kept.set_result(True)
            finally:
                del self._handing[key]
                if not kept.done():
                    kept.set_result(False)

        if not await self._services.once(key, hand_over):
            first = self._handing.get(key)
            # a retry while the first delivery is still on its way: acknowledged only if that one is kept
            if first is not None and not await asyncio.shield(first):
                raise NotKept(f"slack: {key}: its first delivery was not kept")
            log.info("slack: redelivered %s ignored", key)

    async def _hand_over(self, msg: IncomingMessage) -> None:
        self._outbound.remember(msg)
        thread = (msg.chat_id, msg.thread_id or "")
        if self._threads.get(thread) is False and msg.text and not msg.text.startswith("/"):
            self._threads[thread] = True
            self._spawn(self._assistant.title(msg.chat_id, thread[1], msg.text))
        if self._on_message is not None:
            await self._on_message(msg)

    def _remember_thread(self, channel: str, thread_ts: str) -> None:
        self._threads[(channel, thread_ts)] = False
        while len(self._threads) > REMEMBERED_THREADS:
            self._threads.popitem(last=False)

    def _spawn(self, work: Coroutine[Any, Any, None]) -> None:
        task = asyncio.get_running_loop().create_task(work)
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)


def _tokens(settings: SlackConfig, env: Mapping[str, str]) -> tuple[str, str, str]:
    bot, app = env.get("SLACK_BOT_TOKEN", "").strip(), env.get("SLACK_APP_TOKEN", "").strip()
    secret = env.get("SLACK_SIGNING_SECRET", "").strip()
    if not bot.startswith("xoxb-"):
        raise ConfigError("SLACK_BOT_TOKEN must be the app's Bot User OAuth Token (xoxb-…): api.slack.com/apps → "
                          "your app → OAuth & Permissions; `bothub slack-manifest` prints the app to paste")
    if settings.mode == "socket" and not app.startswith("xapp-"):
        raise ConfigError("Socket Mode needs SLACK_APP_TOKEN, an app-level token (xapp-…) with connections:write: "
                          "api.slack.com/apps → your app → Basic Information → App-Level Tokens")
    if settings.mode == "events" and not secret:
        raise ConfigError("the Events API needs SLACK_SIGNING_SECRET (Basic Information → App Credentials) so "
                          "forged requests are refused")
    return bot, app, secret


def api_base(settings: SlackConfig, env: Mapping[str, str]) -> str:
    base = env.get("SLACK_API_BASE") or settings.api_base or SLACK_API
    return base if base.endswith("/") else base + "/"


def create(settings: SlackConfig, env: Mapping[str, str], services: AdapterServices) -> SlackAdapter:
    tokens = _tokens(settings, env)
    base = api_base(settings, env)
    adapter = SlackAdapter(settings, tokens, services, base, proxy_for(base, env))
    if settings.mode == "events" and adapter.endpoint is not None:
        services.add_route("POST", settings.events_path, adapter.endpoint.handle)
    return adapter


async def doctor(settings: SlackConfig, env: Mapping[str, str]) -> str:
    """For `bothub doctor`: does auth.test accept the bot token, with every scope the manifest asks for?"""
    from adapters.slack.manifest import BOT_SCOPES

    bot, app, _ = _tokens(settings, env)
    base = api_base(settings, env)
    web = AsyncWebClient(token=bot, base_url=base, proxy=proxy_for(base, env))
    try:
        me = await web.auth_test()
        if settings.mode == "socket":
            await web.apps_connections_open(app_token=app)
    except SlackApiError as e:
        raise ConfigError(f"Slack refused the token: {typed(e)}") from e
    granted = set(str(me.headers.get("x-oauth-scopes", me.headers.get("X-OAuth-Scopes", ""))).split(","))
    missing = sorted(set(BOT_SCOPES) - {s.strip() for s in granted})
    if missing:
        raise ConfigError(f"the bot token lacks scopes {', '.join(missing)}: add them under OAuth & Permissions "
                          "(or paste `bothub slack-manifest`) and reinstall the app")
    return f"bot @{me.get('user')} in {me.get('team')} ({settings.mode} mode), scopes ok"
