"""Telegram adapter: python-telegram-bot 22 running inside the hub's event loop.

Long polling by default (polling.py: a batch is confirmed only once it is in the inbox); with
`telegram.webhook_url` set, updates arrive on the hub's own aiohttp route (checked by the secret-token
header) on every replica. Telegram allows one poller and one webhook URL per bot, so with replicas only the
replica holding the poller role polls, and only the one holding the webhook role registers its URL; another
takes over when it dies.
Never `run_polling`: that would own the loop.
"""

from __future__ import annotations

import asyncio
import hmac
import logging
import re
import secrets
from collections.abc import Mapping
from dataclasses import replace
from typing import Any

import httpx
from aiohttp import web
from telegram import Bot, BotCommand, Update
from telegram.error import InvalidToken, NetworkError, TelegramError
from telegram.ext import Application, ApplicationBuilder, ContextTypes, TypeHandler
from telegram.request import HTTPXRequest

from adapters.telegram import TelegramConfig
from adapters.telegram.drafts import DRAFT_INTERVAL, DRAFT_LIFE, show_draft
from adapters.telegram.inbound import BotIdentity, parse_update
from adapters.telegram.outbound import Outbound, TelegramFiles
from adapters.telegram.polling import Poller
from bot.adapter import AdapterServices, Capabilities, MenuCommand, MessageHandler, NotKept, Share
from bot.config import ConfigError, proxy_for
from bot.httpkit.fence import before_request
from bot.messages import ChatRef, SentRef
from bot.replies import Reply

log = logging.getLogger("bothub.telegram")

DEFAULT_API_BASE = "https://api.telegram.org"
SECRET_HEADER = "X-Telegram-Bot-Api-Secret-Token"
ALLOWED_UPDATES = ["message", "callback_query"]
POLL_TIMEOUT = 10  # seconds a getUpdates long poll may wait
POLLER = "telegram-poller"  # the role (one per bot) whose holder polls
WEBHOOK = "telegram-webhook"  # the role (one per bot) whose holder registers its webhook URL
REGISTER_RETRY = 5.0  # seconds between attempts to register the webhook, for the role's holder
REQUEST_POOL = 256  # connections for sends and edits: PTB's own default (getUpdates has its one)
_SECRET_FORMAT = re.compile(r"[A-Za-z0-9_-]{1,256}")

MAX_MENU = 100  # commands Telegram lists
_MENU_NAME = re.compile(r"[a-z0-9_]{1,32}")


class TelegramAdapter:
    name = "telegram"
    draft_interval = DRAFT_INTERVAL  # Drafting: streamed answers in private chats are sendMessageDraft (drafts.py)
    draft_life = DRAFT_LIFE
    capabilities = Capabilities(
        max_text=3800,
        can_edit=True,
        edit_interval=1.0,
        group_edit_interval=3.0,
        buttons=True,
        feedback=False,  # no native feedback control: answers keep their look
        groups=True,
        overhears=True,
        refuses_sends=True,
        tree_budget=3500,
        burst=3,  # Telegram: ~1 message/s per chat, "short bursts" allowed (5 provoked 429s in the fake)
        rate=1.0,
        group_send_window=(20, 60.0),  # Telegram: about 20 new messages per minute into one group
        chat_send_window=None,
        global_window=(30, 1.0),  # about 30 messages per second over all chats
        edit_window=None,
        send_window=None,
        threads_paced_apart=False,  # forum topics share their group's flood limit
        interactions_paced_apart=False,
        replace_pressed=True,
        closes_streams=False,
        restart_when_down=True,
        reorders=True,
        columns=0,
    )

    def __init__(self, token: str, api_base: str, webhook_url: str | None, webhook_secret: str,
                 menu: tuple[MenuCommand, ...] = (), share: Share | None = None, proxy: str | None = None) -> None:
        root = api_base.rstrip("/").removesuffix("/bot")
        self._api_root = root
        tls = httpx.create_ssl_context()  # PTB's two HTTP clients would each load the CA bundle (≈ 20 ms, 1–2 MB)
        builder = (
            ApplicationBuilder()
            .token(token)
            .base_url(f"{root}/bot")
            .base_file_url(f"{root}/file/bot")
            .concurrent_updates(True)  # PTB's default handles one update at a time across all chats
            .request(HTTPXRequest(connection_pool_size=REQUEST_POOL, proxy=proxy, httpx_kwargs={
                "verify": tls, "event_hooks": {"request": [before_request]}}))  # the fence's last check
            .get_updates_request(HTTPXRequest(connection_pool_size=1, proxy=proxy, httpx_kwargs={"verify": tls}))
        )
        self._app: Application[Any, Any, Any, Any, Any, Any] = builder.updater(None).build()  # polling.py polls
        self._app.add_handler(TypeHandler(Update, self._on_update))
        self._app.add_error_handler(self._on_error)
        self._webhook_url = webhook_url
        self._menu = [c for c in menu if _MENU_NAME.fullmatch(c.name)][:MAX_MENU]
        self._webhook_secret = webhook_secret
        self._outbound = Outbound(self._app.bot)
        self.files = TelegramFiles(self._outbound)
        self._on_message: MessageHandler | None = None
        self._not_kept: set[int] = set()  # update ids the hub did not keep, until `_take` reports them
        self._me: BotIdentity | None = None
        self._share = share
        self._standby = False  # polling mode on a replica that does not hold the poller role
        self._hook_held = False  # this replica holds the webhook role (replicas) and keeps it registered
        self._hooking: asyncio.Task[None] | None = None
        self._poller = Poller(self._app.bot, self._take, POLL_TIMEOUT, ALLOWED_UPDATES)

    async def start(self, on_message: MessageHandler) -> None:
        self._on_message = on_message
        try:
            await self._connect()
        except BaseException:
            await self.stop()  # release the HTTP pool of a half-started bot
            raise

    async def _connect(self) -> None:
        try:
            await self._app.initialize()  # getMe: the username decides what counts as a mention
        except InvalidToken as e:
            raise ConfigError("Telegram rejected TELEGRAM_BOT_TOKEN; check it with @BotFather") from e
        except NetworkError as e:
            raise ConnectionError(f"cannot reach the Telegram Bot API at {self._api_root}: {e.message}") from e
        bot = self._app.bot
        self._me = BotIdentity(bot.id, bot.username)
        await self._publish_commands()
        await self._app.start()
        if self._webhook_url and self._share is None:
            await self._set_webhook()
        elif self._webhook_url and self._share is not None:
            # replicas, each with its own URL (no balancer): the last to register would win and, dead, leave the
            # bot deaf; one holds the role and registers, and a survivor re-registers when the holder dies
            await self._share(f"{WEBHOOK} {bot.id}", 1, self._hook_role)
        elif self._share is None:
            await self._poll(True)
        else:
            self._standby = True
            await self._share(POLLER, 1, lambda held: self._poll(bool(held)))
        mode = "webhook" if self._webhook_url else "standby: another replica polls" if self._standby else "polling"
        log.info("telegram connected as @%s (%s)", bot.username, mode)

    async def _hook_role(self, held: frozenset[int]) -> None:
        """The webhook role came here or left: registering runs on its own, so the role's balance never waits."""
        self._hook_held = bool(held)
        if held and (self._hooking is None or self._hooking.done()):
            self._hooking = asyncio.create_task(self._keep_registered(), name="telegram-webhook")

    async def _keep_registered(self) -> None:
        """Point the bot's webhook here (the other replicas take updates posted to them all the same); a failed
        registration is tried again until it goes through or the role moves on."""
        while self._hook_held and self._app.running:
            try:
                await self._set_webhook()
                log.info("telegram: this replica registered the webhook")
                return
            except TelegramError as e:
                log.error("telegram: registering the webhook %s failed (again in %s s): %s", self._webhook_url,
                          REGISTER_RETRY, e.message)
            await asyncio.sleep(REGISTER_RETRY)

    async def _set_webhook(self) -> None:
        assert self._webhook_url is not None
        await self._app.bot.set_webhook(self._webhook_url, secret_token=self._webhook_secret,
                                        allowed_updates=ALLOWED_UPDATES)

    async def _poll(self, leading: bool) -> None:
        """Start or stop long polling as this replica gains or loses the poller role."""
        self._standby = not leading
        if leading and not self._poller.running:
            await self._poller.start()
            log.info("telegram: this replica polls now")
        elif not leading and self._poller.running:
            await self._poller.stop()
            log.info("telegram: polling handed to another replica")

    async def stop(self) -> None:
        app = self._app
        self._hook_held = False
        if self._hooking is not None:
            self._hooking.cancel()
            await asyncio.gather(self._hooking, return_exceptions=True)
        await self._poller.stop()
        if app.running:
            await app.stop()
        await app.shutdown()
        await app.bot.shutdown()  # no-op after app.shutdown; needed when initialize() failed halfway

    def connected(self) -> bool:
        if not self._app.running:
            return False
        return bool(self._webhook_url) or self._standby or self._poller.running  # a revoked token ends polling

    async def send(self, chat: ChatRef, reply: Reply, *, final: bool = True) -> SentRef:
        return await self._outbound.send(chat, reply)

    async def edit(self, ref: SentRef, reply: Reply, *, final: bool) -> None:
        await self._outbound.edit(ref, reply)

    async def draft(self, chat: ChatRef, reply: Reply, ref: SentRef | None) -> SentRef:
        return await show_draft(self._outbound, chat, reply, ref)

    async def typing(self, chat: ChatRef) -> None:
        await self._outbound.typing(chat)

    async def webhook(self, request: web.Request) -> web.Response:
        """The hub's route for Telegram's webhook: check the secret, take the update into the hub (its durable
        inbox; the answer runs later), then answer 200."""
        given = request.headers.get(SECRET_HEADER, "")
        if not hmac.compare_digest(given.encode(), self._webhook_secret.encode()):
            return web.Response(status=403)
        if not self._app.running:
            return web.Response(status=503)  # Telegram retries later
        try:
            update = Update.de_json(await request.json(), self._app.bot)
        except Exception as e:  # any malformed body: PTB raises AttributeError too; never a 500 → redelivery loop
            log.warning("telegram webhook: unreadable update skipped (%s)", type(e).__name__)
            return web.Response()
        try:
            await self._take(update)  # in the inbox before the 200: a crash after it loses nothing
        except NotKept:
            return web.Response(status=503)  # Telegram retries later
        return web.Response()

    async def _take(self, update: Update) -> None:
        """Through PTB's handlers, which swallow what they raise: NotKept when the hub did not keep it."""
        await self._app.process_update(update)
        if update.update_id in self._not_kept:
            self._not_kept.discard(update.update_id)
            raise NotKept(f"telegram update {update.update_id}")

    async def _publish_commands(self) -> None:
        """The command menu in Telegram's clients, in English and Chinese, from the core registry."""
        if not self._menu:
            return
        bot = self._app.bot
        try:
            await bot.set_my_commands([BotCommand(c.name, c.en[:256]) for c in self._menu])
            await bot.set_my_commands([BotCommand(c.name, c.zh[:256]) for c in self._menu], language_code="zh")
        except TelegramError as e:
            log.warning("could not publish the command menu: %s", e.message)

    async def _on_update(self, update: Update, _context: ContextTypes.DEFAULT_TYPE) -> None:
        if self._on_message is None or self._me is None:
            return
        try:
            inbound = parse_update(update, self._me)
        except Exception:
            log.exception("telegram update %s could not be parsed; skipped", update.update_id)
            return
        if inbound is None:
            return
        try:  # to the hub first: a tap followed by a typed message must reach the session in that order
            await self._on_message(inbound.message)
        except Exception:  # not kept: `_take` leaves it unconfirmed, so Telegram delivers it again
            log.warning("telegram update %s not kept; Telegram delivers it again", update.update_id)
            self._not_kept.add(update.update_id)
            return
        if (query_id := inbound.callback_query_id) is not None:
            try:
                await self._app.bot.answer_callback_query(query_id)
            except TelegramError as e:
                log.info("callback query %s not acknowledged: %s", query_id, e.message)

    async def _on_error(self, update: object, context: ContextTypes.DEFAULT_TYPE) -> None:
        log.error("telegram handler error: %r", context.error)


def create(settings: TelegramConfig, env: Mapping[str, str], services: AdapterServices) -> TelegramAdapter:
    token = env.get("TELEGRAM_BOT_TOKEN", "").strip()
    if not token:
        raise ConfigError("TELEGRAM_BOT_TOKEN is not set; create a bot with @BotFather and export its token")
    api_base = _api_base(settings, env)
    secret = env.get("TELEGRAM_WEBHOOK_SECRET") or secrets.token_urlsafe(32)
    if settings.webhook_url and not _SECRET_FORMAT.fullmatch(secret):
        raise ConfigError("TELEGRAM_WEBHOOK_SECRET must be 1-256 characters of A-Z, a-z, 0-9, _ and -")
    adapter = TelegramAdapter(token, api_base, settings.webhook_url, secret, services.commands, services.share,
                              proxy_for(api_base, env))
    if settings.messages_per_second != adapter.capabilities.global_window[0]:
        adapter.capabilities = replace(adapter.capabilities, global_window=(settings.messages_per_second, 1.0))
    if settings.webhook_url:
        services.add_route("POST", settings.webhook_path, adapter.webhook)
    return adapter


def _api_base(settings: TelegramConfig, env: Mapping[str, str]) -> str:
    return env.get("TELEGRAM_API_BASE") or settings.api_base or DEFAULT_API_BASE


async def doctor(settings: TelegramConfig, env: Mapping[str, str]) -> str:
    """For `bothub doctor`: does Telegram accept the token (getMe), and may the bot read group messages?"""
    token = env.get("TELEGRAM_BOT_TOKEN", "").strip()
    if not token:
        raise ConfigError("TELEGRAM_BOT_TOKEN is not set")
    root = _api_base(settings, env).rstrip("/")
    try:
        request = HTTPXRequest(proxy=proxy_for(root, env))
        async with Bot(token, base_url=f"{root.removesuffix('/bot')}/bot", request=request) as bot:
            privacy = "" if bot.bot.can_read_all_group_messages else (
                "; group privacy is on, so groups reach it only by commands and replies to it, and no group "
                "context is kept (@BotFather: /setprivacy → Disable, then add the bot to the group again)")
            return f"token accepted, bot @{bot.username}{privacy}"
    except InvalidToken as e:
        raise ConfigError("Telegram rejected TELEGRAM_BOT_TOKEN; check it with @BotFather") from e
