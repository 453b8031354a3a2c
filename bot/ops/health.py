"""Health endpoints on the hub's web server: /healthz (alive), /readyz (adapters connected; the replica's
id, roles and chats), /metrics."""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence

from aiohttp import web
from prometheus_client import CONTENT_TYPE_LATEST

from bot.adapter import Adapter, MessageHandler
from bot.messages import InboundEvent
from bot.ops.metrics import Metrics


class Health:
    """Knows each adapter's connection state and when it last delivered an event."""

    def __init__(self, adapters: Sequence[Adapter], metrics: Metrics,
                 replica: Callable[[], dict[str, object] | None] | None = None,
                 clock: Callable[[], float] = time.time) -> None:
        self.adapters = adapters
        self.metrics = metrics
        self._replica = replica  # this replica's id, roles and chats, when there are several
        self.last_event: dict[str, float] = {}
        self._clock = clock

    def track(self, adapter_name: str, handler: MessageHandler) -> MessageHandler:
        """Wrap the hub's entry point so every inbound event is counted and time-stamped."""

        async def on_message(msg: InboundEvent) -> None:
            self.last_event[adapter_name] = self._clock()
            self.metrics.message_in(msg.platform)
            await handler(msg)

        return on_message

    def readiness(self) -> tuple[bool, dict[str, dict[str, object]]]:
        now = self._clock()
        report: dict[str, dict[str, object]] = {}
        for adapter in self.adapters:
            last = self.last_event.get(adapter.name)
            report[adapter.name] = {
                "connected": is_connected(adapter),
                "last_event": last,
                "seconds_since_last_event": round(now - last, 3) if last is not None else None,
            }
        return all(entry["connected"] for entry in report.values()), report

    def add_routes(self, app: web.Application) -> None:
        app.router.add_get("/healthz", self._healthz)
        app.router.add_get("/readyz", self._readyz)
        app.router.add_get("/metrics", self._metrics)

    async def _healthz(self, request: web.Request) -> web.Response:
        return web.json_response({"status": "ok"})

    async def _readyz(self, request: web.Request) -> web.Response:
        ready, adapters = self.readiness()
        body: dict[str, object] = {"ready": ready, "adapters": adapters}
        if self._replica is not None and (replica := self._replica()) is not None:
            body["replica"] = replica
        return web.json_response(body, status=200 if ready else 503)

    async def _metrics(self, request: web.Request) -> web.Response:
        return web.Response(body=self.metrics.render(), headers={"Content-Type": CONTENT_TYPE_LATEST})


def is_connected(adapter: Adapter) -> bool:
    """An adapter whose check itself fails counts as not connected rather than breaking the probe."""
    try:
        return bool(adapter.connected())
    except Exception:
        return False
