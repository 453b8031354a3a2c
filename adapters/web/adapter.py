"""Web chat lifecycle and endpoints: the page, a POST per message, and an SSE stream of replies per tab."""

from __future__ import annotations

import uuid
from pathlib import Path

import jinja2
from aiohttp import web

from adapters.web.inbound import PLATFORM, BadMessage, parse_post
from adapters.web.outbound import Channels
from adapters.web.render import render
from bot.adapter import AdapterServices, Capabilities, FileTransfer, MessageHandler
from bot.messages import ChatRef, SentRef
from bot.replies import Reply
from bot.web import sse
from bot.web.auth import WebSession
from bot.web.security import SESSION

HERE = Path(__file__).parent
_pages = jinja2.Environment(loader=jinja2.FileSystemLoader(HERE / "templates"), autoescape=True,
                            undefined=jinja2.StrictUndefined)


def _session(request: web.Request) -> WebSession:
    """The dashboard's middleware signs the request in; without the dashboard there is no way in at all."""
    if SESSION not in request:
        raise web.HTTPUnauthorized(text="the web chat needs the dashboard's sign-in (server.dashboard)")
    return request[SESSION]


class WebChatAdapter:
    name = PLATFORM
    capabilities = Capabilities(
        max_text=100_000, can_edit=True, edit_interval=0.2, group_edit_interval=0.2, buttons=True,
        tree_budget=8000, burst=1000, rate=100.0, group_send_window=None, global_window=(10_000, 1.0),
        threads_paced_apart=False, interactions_paced_apart=False, replace_pressed=False, closes_streams=False,
        restart_when_down=False,
    )

    def __init__(self, services: AdapterServices) -> None:
        self._channels = Channels()
        self._on_message: MessageHandler | None = None
        services.add_route("GET", "/webchat", self._page)
        services.add_route("POST", "/webchat/send", self._post)
        services.add_route("GET", "/webchat/events", self._events)
        services.add_route("GET", "/webchat/webchat.js", self._script)

    @property
    def files(self) -> FileTransfer | None:
        return None  # text only for now

    def connected(self) -> bool:
        return self._on_message is not None

    async def start(self, on_message: MessageHandler) -> None:
        self._on_message = on_message

    async def stop(self) -> None:
        self._on_message = None
        self._channels.shut()

    async def send(self, chat: ChatRef, reply: Reply, *, final: bool = True) -> SentRef:
        ref = SentRef(chat, uuid.uuid4().hex)
        self._channels.publish(chat.chat_id, "message", {"id": ref.message_id, "final": final, **render(reply)})
        return ref

    async def edit(self, ref: SentRef, reply: Reply, *, final: bool) -> None:
        self._channels.publish(ref.chat.chat_id, "message", {"id": ref.message_id, "final": final, **render(reply)})

    async def typing(self, chat: ChatRef) -> None:
        self._channels.publish(chat.chat_id, "typing", {})

    async def _page(self, request: web.Request) -> web.Response:
        session = _session(request)
        html = _pages.get_template("webchat.html").render(
            csrf=session.csrf, chat=f"{PLATFORM}:{session.chat_id}")
        return web.Response(text=html, content_type="text/html")

    async def _script(self, request: web.Request) -> web.FileResponse:
        return web.FileResponse(HERE / "static" / "webchat.js", headers={"Content-Type": "text/javascript"})

    async def _post(self, request: web.Request) -> web.Response:
        session = _session(request)
        if self._on_message is None:
            return web.json_response({"error": "the web chat is not running"}, status=503)
        try:
            msg = parse_post(session.chat_id, await request.json())
        except ValueError as e:  # BadMessage, or a body that is not JSON
            text = str(e) if isinstance(e, BadMessage) else 'send JSON like {"text": "hello"}'
            return web.json_response({"error": text}, status=400)
        await self._on_message(msg)
        return web.json_response({"id": msg.message_id}, status=202)

    async def _events(self, request: web.Request) -> web.StreamResponse:
        session = _session(request)
        queue = self._channels.open(session.chat_id)
        try:
            return await sse.serve(request, queue)
        finally:
            self._channels.close(session.chat_id, queue)
