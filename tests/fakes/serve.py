"""Every fake serves on 127.0.0.1 with a port the OS picks (port 0); this starts one and reports the port."""

from __future__ import annotations

from typing import Any

from aiohttp import web


async def serve_local(app: web.Application, port: int = 0, backlog: int = 128,
                      **runner_options: Any) -> tuple[web.AppRunner, int]:
    runner = web.AppRunner(app, **runner_options)
    await runner.setup()
    await web.TCPSite(runner, "127.0.0.1", port, backlog=backlog).start()
    return runner, runner.addresses[0][1]
