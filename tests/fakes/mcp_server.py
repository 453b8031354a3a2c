"""A small real MCP server for the tests, built with the official SDK.

`python -m tests.fakes.mcp_server stdio` speaks MCP on stdin/stdout; `... http TOKEN` serves streamable
HTTP on 127.0.0.1 (an OS-picked port, printed as the first line) and refuses requests without
`Authorization: Bearer TOKEN`. `... broken` exits at once, like a server that cannot start.
"""

from __future__ import annotations

import asyncio
import os
import socket
import sys
from typing import Any

from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.exceptions import ToolError

server = MCPServer("bothub-test")


@server.tool(description="Echo the text back")
def echo(text: str) -> str:
    return f"echo: {text}"


@server.tool(description="Add two integers")
def add(a: int, b: int) -> str:
    return str(a + b)


@server.tool(description="Sleep for some seconds, then answer")
async def slow(seconds: float) -> str:
    await asyncio.sleep(seconds)
    return "finally"


@server.tool(description="Return a long text")
def big(size: int) -> str:
    return "x" * size


@server.tool(description="Say which process answers (changes after a restart)")
def pid() -> str:
    return str(os.getpid())


@server.tool(description="Kill the server process")
def crash() -> str:
    os._exit(3)


@server.tool(description="A tool that reports an error")
def fail() -> str:
    raise ToolError("the tool failed on purpose")  # a ToolError's text reaches the client


class RequireBearer:
    """ASGI middleware: the headers from the bot's config must arrive, or the request is refused."""

    def __init__(self, app: Any, token: str) -> None:
        self.app, self.token = app, token

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] == "http":
            auth = dict(scope["headers"]).get(b"authorization", b"").decode()
            if auth != f"Bearer {self.token}":
                await send({"type": "http.response.start", "status": 401, "headers": []})
                await send({"type": "http.response.body", "body": b"unauthorized"})
                return
        await self.app(scope, receive, send)


async def serve_http(token: str) -> None:
    import uvicorn

    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    sock.listen(64)  # connections wait in the backlog until uvicorn accepts: the port is usable once printed
    print(sock.getsockname()[1], flush=True)
    app = RequireBearer(server.streamable_http_app(), token)
    config = uvicorn.Config(app, log_level="warning", lifespan="on")
    await uvicorn.Server(config).serve(sockets=[sock])


if __name__ == "__main__":
    mode = sys.argv[1]
    if mode == "broken":
        print("cannot start: no database", file=sys.stderr)
        sys.exit(2)
    if mode == "http":
        asyncio.run(serve_http(sys.argv[2]))
    else:
        server.run("stdio")
