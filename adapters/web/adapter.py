"""Web chat lifecycle and endpoints: the page, a POST per message, and an SSE stream of replies per tab."""

from __future__ import annotations

import uuid
from pathlib import Path
from urllib.parse import quote

import jinja2
from aiohttp import web

from adapters.web.files import WebFiles
from adapters.web.inbound import PLATFORM, BadMessage, parse_form, parse_post
from adapters.web.outbound import Channels
from adapters.web.render import render
from bot.adapter import AdapterServices, Capabilities, FileTransfer, MessageHandler
from bot.httpkit import sse
from bot.httpkit.auth import WebSession
from bot.httpkit.security import SESSION
from bot.messages import ChatRef, IncomingMessage, SentRef
from bot.replies import Reply

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
        groups=False, overhears=False, refuses_sends=False,  # one to one only; sending never fails
        tree_budget=8000, burst=1000, rate=100.0, group_send_window=None, global_window=(10_000, 1.0),
        threads_paced_apart=False, interactions_paced_apart=False, replace_pressed=False, closes_streams=False,
        restart_when_down=False,
    )

    def __init__(self, services: AdapterServices) -> None:
        self._channels = Channels()
        self._files = WebFiles(self._channels.publish)
        self._max_file_bytes = services.max_file_bytes
        self._on_message: MessageHandler | None = None
        services.add_route("GET", "/webchat", self._page)
        services.add_route("POST", "/webchat/send", self._post)
        services.add_route("GET", "/webchat/events", self._events)
        services.add_route("GET", "/webchat/webchat.js", self._script)
        services.add_route("GET", "/webchat/files/{token}", self._file)

    @property
    def files(self) -> FileTransfer | None:
        return self._files

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
            msg = await self._parse(request, session.chat_id)
        except ValueError as e:  # BadMessage, or a body that is not JSON / not a form
            text = str(e) if isinstance(e, BadMessage) else 'send JSON like {"text": "hello"}, or a form with files'
            return web.json_response({"error": text}, status=400)
        await self._on_message(msg)
        return web.json_response({"id": msg.message_id}, status=202)

    async def _parse(self, request: web.Request, chat_id: str) -> IncomingMessage:
        if request.content_type == "multipart/form-data":
            return await parse_form(chat_id, await request.multipart(), self._max_file_bytes, self._files.stage)
        return parse_post(chat_id, await request.json())

    async def _file(self, request: web.Request) -> web.Response:
        """A file the agent sent, to the session it was sent to (anyone else gets a 404)."""
        file = self._files.sent(_session(request).chat_id, request.match_info["token"])
        if file is None:
            raise web.HTTPNotFound(text="no such file here (it may have expired: ask for it again)")
        disposition = "inline" if file.is_image else "attachment"
        return web.Response(body=file.data, content_type=file.mime, headers={
            "Content-Disposition": f"{disposition}; filename*=UTF-8''{quote(file.name)}",
            "X-Content-Type-Options": "nosniff"})

    async def _events(self, request: web.Request) -> web.StreamResponse:
        session = _session(request)
        queue = self._channels.open(session.chat_id)
        try:
            return await sse.serve(request, queue)
        finally:
            self._channels.close(session.chat_id, queue)
