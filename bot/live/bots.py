"""The bot accounts that run in this process besides each platform's default one: an adapter per identity,
made by its platform's spec with the identity's credentials and settings, named `platform@identity`, with its
own connection, delivery (pacing budget), webhook path (under /bots/<identity>/) and command menu. Started
and stopped while the hub runs; nothing else restarts."""

from __future__ import annotations

import dataclasses
import logging
from collections.abc import Awaitable, Callable, Mapping
from typing import Any

from aiohttp import web

from bot.adapter import (
    Adapter,
    AdapterServices,
    AdapterSpec,
    MessageHandler,
    Share,
    WebHandler,
    find_spec,
)
from bot.config import Config, ConfigError
from bot.fleet.catalog import Catalog
from bot.fleet.model import Identity
from bot.messages import ChatRef, InboundEvent, address

log = logging.getLogger("bothub.bots")

# the hub takes the adapter in under a name (counted, delivered, watched); what it hands back is what runs
Attach = Callable[[Adapter, str], Adapter]
Start = Callable[[Adapter], Awaitable[None]]


def tagged(handler: MessageHandler, name: str) -> MessageHandler:
    """Events from the adapter called `platform@identity` carry the identity: that is what keys their chats."""
    _, _, identity = name.partition("@")
    if not identity:
        return handler

    async def on_message(event: InboundEvent) -> None:
        await handler(dataclasses.replace(event, identity=identity))

    return on_message


def made_for(cfg: Config, env: Mapping[str, str], identity: Identity) -> tuple[AdapterSpec[Any], Any, dict[str, str]]:
    """What the identity's adapter is made from: its platform's spec, the platform's section under the identity's
    settings, and the environment with the platform's account (its ids and secrets) replaced by the identity's."""
    spec = find_spec(identity.platform)
    if spec is None:
        raise ConfigError(f"identity {identity.name}: no platform named {identity.platform!r}")
    base = cfg.sections.get(identity.platform) or spec.config_model()
    section = spec.config_model.model_validate({**base.model_dump(exclude_unset=True), **identity.settings,
                                                "enabled": True})
    own = {k: v for k, v in env.items() if k not in spec.account} | identity.credentials
    return spec, section, own


async def verify(cfg: Config, env: Mapping[str, str], identity: Identity) -> str:
    """Ask the platform whether the identity's credentials work (the spec's doctor, e.g. a "who am I" call): its
    line, or an exception saying what the platform answered."""
    spec, section, own = made_for(cfg, env, identity)
    if spec.doctor is None:
        return f"{identity.platform}: no check available"
    return await spec.doctor(section, own)


class Routes:
    """Web routes of identities, added and removed while the server runs (aiohttp's router is frozen once it
    serves): one route `/bots/{identity}/{path}` looks them up."""

    PREFIX = "/bots"

    def __init__(self) -> None:
        self._handlers: dict[tuple[str, str, str], WebHandler] = {}

    def mount(self, app: web.Application) -> None:
        app.router.add_route("*", self.PREFIX + "/{identity}/{path:.*}", self._dispatch)

    def adder(self, identity: str) -> Callable[[str, str, WebHandler], None]:
        def add(method: str, path: str, handler: WebHandler) -> None:
            key = (identity, method.upper(), path.lstrip("/"))
            if key in self._handlers:
                raise ConfigError(f"identity {identity}: two routes for {method} {path}")
            self._handlers[key] = handler

        return add

    def drop(self, identity: str) -> None:
        for key in [k for k in self._handlers if k[0] == identity]:
            del self._handlers[key]

    async def _dispatch(self, request: web.Request) -> web.StreamResponse:
        key = (request.match_info["identity"], request.method, request.match_info["path"])
        handler = self._handlers.get(key)
        if handler is None:
            raise web.HTTPNotFound()
        return await handler(request)


class Bots:
    def __init__(self, cfg: Config, env: Mapping[str, str], services: AdapterServices, routes: Routes,
                 attach: Attach, detach: Callable[[str], None], start: Start,
                 settle: Callable[[str], Awaitable[None]]) -> None:
        self._cfg = cfg
        self._env = env
        self._services = services
        self._routes = routes
        self._attach = attach
        self._detach = detach
        self._start = start
        self._settle = settle  # address → once its chats' answers are done (or the grace is over)
        self.running: dict[str, tuple[Identity, Adapter]] = {}  # identity name → what it runs as
        # False until the hub's first start: identities are only attached then, and start with every other adapter
        # before the inbox is resumed (one started earlier could have its first message queued twice)
        self.live = False
        self.failed: dict[str, str] = {}  # identity name → why it did not start (until it does)

    def wanted(self, catalog: Catalog) -> dict[str, Identity]:
        """The identities this process runs itself: enabled, not a platform's default (those are the config's)."""
        return {i.name: i for i in catalog.identities.values() if i.enabled and i.tag}

    async def sync(self, catalog: Catalog) -> list[str]:
        """Start what is new or changed, stop what is gone or disabled; the others are left alone. Returns the
        names of identities that failed to start (logged; the next change or restart tries again)."""
        wanted, failed = self.wanted(catalog), []
        for name in [n for n, (identity, _) in self.running.items() if wanted.get(n) != identity
                     or wanted[n].credentials != identity.credentials]:
            await self.stop(name)
        for name, identity in wanted.items():
            if name not in self.running:
                try:
                    await self.begin(identity)
                except Exception as e:
                    log.error("identity %s (%s) did not start: %s", name, identity.platform, e)
                    failed.append(name)
                    self.failed[name] = str(e) or type(e).__name__
        return failed

    def create(self, identity: Identity) -> Adapter:
        """The identity's adapter, not started."""
        spec, section, env = made_for(self._cfg, self._env, identity)
        return spec.create(section, env, self._services_for(identity.name))

    async def begin(self, identity: Identity) -> None:
        adapter = self.create(identity)
        named = self._attach(adapter, address(identity.platform, identity.name))
        try:
            if self.live:
                await self._start(named)
        except BaseException:
            self._detach(named.name)
            self._routes.drop(identity.name)
            raise
        self.running[identity.name] = (identity, named)
        self.failed.pop(identity.name, None)
        log.info("identity %s started as %s", identity.name, named.name)

    async def stop(self, name: str) -> None:
        """Let its running answers finish (up to the shutdown grace), then close its connection and let go of its
        delivery and webhook routes."""
        identity, adapter = self.running[name]
        await self._settle(adapter.name)
        self._routes.drop(name)
        try:
            await adapter.stop()
        except Exception:
            log.exception("stopping identity %s failed", name)
        self._detach(adapter.name)
        del self.running[name]  # only now: until its delivery is detached, it still runs
        log.info("identity %s stopped", identity.name)

    async def stop_all(self) -> None:
        for name in list(self.running):
            await self.stop(name)

    def _services_for(self, identity: str) -> AdapterServices:
        """The core's services as this identity's adapter must see them: its chats are its own (the identity on
        every ChatRef it asks about), its dedupe keys and shared roles apart from another bot's."""
        base = self._services

        def own(chat: ChatRef) -> ChatRef:
            return dataclasses.replace(chat, identity=identity)

        async def seen(key: str) -> bool:
            return await base.seen(f"{identity}|{key}")

        async def unsee(key: str) -> None:
            if base.unsee is not None:
                await base.unsee(f"{identity}|{key}")

        share: Share | None = None
        if base.share is not None:
            outer = base.share

            async def share_own(group: str, count: int, changed: Callable[[frozenset[int]], Awaitable[None]]) -> None:
                await outer(f"{group}@{identity}", count, changed)

            share = share_own
        answered, history = base.answered, base.history
        return dataclasses.replace(
            base, list_conversations=lambda chat, user: base.list_conversations(own(chat), user), seen=seen,
            unsee=unsee, add_route=self._routes.adder(identity), share=share,
            answered=(lambda chat: answered(own(chat))) if answered is not None else None,
            history=(lambda chat, before, n: history(own(chat), before, n)) if history is not None else None)
