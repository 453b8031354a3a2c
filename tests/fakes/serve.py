"""Every fake serves on 127.0.0.1 with a port the OS picks (port 0); this starts one and reports the port."""

from __future__ import annotations

import ssl
from typing import Any

from aiohttp import web


async def serve_local(app: web.Application, port: int = 0, backlog: int = 128,
                      ssl_context: ssl.SSLContext | None = None, **runner_options: Any) -> tuple[web.AppRunner, int]:
    runner = web.AppRunner(app, **runner_options)
    await runner.setup()
    await web.TCPSite(runner, "127.0.0.1", port, backlog=backlog, ssl_context=ssl_context).start()
    return runner, runner.addresses[0][1]


def open_connections(runner: web.AppRunner | None) -> int:
    """Connections the server still holds open (a client that closed its session has none left here)."""
    server = runner.server if runner is not None else None
    return len(server.connections) if server is not None else 0
