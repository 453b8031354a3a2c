"""Web chat lifecycle and endpoints: the page, a POST per message, an SSE stream of replies per tab, and the
reads a chat window needs (the branch so far, page by page, and the chat's conversations)."""

from __future__ import annotations

import json
import uuid
from pathlib import Path
from urllib.parse import quote

import jinja2
from aiohttp import web

from adapters.web.files import WebFiles
from adapters.web.inbound import PLATFORM, USER, BadMessage, parse_form, parse_post
from adapters.web.outbound import Channels
from adapters.web.render import history_page, render
from bot.adapter import AdapterServices, Capabilities, FileTransfer, MessageHandler, NotKept
from bot.httpkit import lang, sse
from bot.httpkit.auth import WebSession
from bot.httpkit.security import SESSION
from bot.i18n import t
from bot.messages import ChatRef, IncomingMessage, SentRef
from bot.replies import Reply

HERE = Path(__file__).parent
STATIC = {name: "text/javascript" for name in ("bubbles.js", "webchat.js", "sidebar.js")} | {"webchat.css": "text/css"}
PAGE = 30  # messages per history page: a screenful and a bit, older ones load as the reader scrolls up
SCRIPT_STRINGS = ("wc_copy", "wc_copied", "wc_retry", "wc_branch", "wc_trace", "wc_not_sent", "wc_start", "wc_no_match",
                  "wc_tools", "wc_interrupted", "wc_unanswered", "wc_messages", "untitled", "wc_code_copy")
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
        max_text=100_000, can_edit=True, edit_interval=0.2, group_edit_interval=0.2, buttons=True, feedback=False,
        groups=False, overhears=False, refuses_sends=False,  # one to one only; sending never fails
        tree_budget=8000, burst=1000, rate=100.0, group_send_window=None, chat_send_window=None,
        global_window=(10_000, 1.0),
 edit_window=None,
 send_window=None,
        threads_paced_apart=False, interactions_paced_apart=False, replace_pressed=False, closes_streams=False,
        restart_when_down=False,
        reorders=False,
        columns=4,
    )

    def __init__(self, services: AdapterServices) -> None:
        self._channels = Channels(services.relay)
        self._files = WebFiles(self._channels.publish)
        self._max_file_bytes = services.max_file_bytes
        self._on_message: MessageHandler | None = None
        self._services = services
        services.add_route("GET", "/webchat", self._page)
        services.add_route("POST", "/webchat/send", self._post)
        services.add_route("GET", "/webchat/events", self._events)
        services.add_route("GET", "/webchat/static/{name}", self._static)
        services.add_route("GET", "/webchat/history", self._history)
        services.add_route("GET", "/webchat/conversations", self._conversations)
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
        await self._channels.share(chat.chat_id, "message", {"id": ref.message_id, "final": final, **render(reply)})
        return ref

    async def edit(self, ref: SentRef, reply: Reply, *, final: bool) -> None:
        await self._channels.share(ref.chat.chat_id, "message", {"id": ref.message_id, "final": final,
                                                                  **render(reply)})

    async def typing(self, chat: ChatRef) -> None:
        await self._channels.share(chat.chat_id, "typing", {})

    async def _page(self, request: web.Request) -> web.Response:
        session, language = _session(request), lang.pick(request)
        strings = {key: t(language, key) for key in SCRIPT_STRINGS}
        html = _pages.get_template("webchat.html").render(
            csrf=session.csrf, chat=f"{PLATFORM}:{session.chat_id}", lang=language, strings=json.dumps(strings),
            t=lambda key, **values: t(language, key, **values), path=request.path_qs)
        return web.Response(text=html, content_type="text/html")

    async def _static(self, request: web.Request) -> web.FileResponse:
        name = request.match_info["name"]
        if name not in STATIC:
            raise web.HTTPNotFound()
        return web.FileResponse(HERE / "static" / name, headers={"Content-Type": STATIC[name]})

    async def _history(self, request: web.Request) -> web.Response:
        """The signed-in session's own branch, `PAGE` messages above `before` (the cursor when absent)."""
        session = _session(request)
        if self._services.history is None:
            return web.json_response({"error": "history is not available"}, status=503)
        before = request.query.get("before") or None
        page = await self._services.history(ChatRef(PLATFORM, session.chat_id), before, PAGE)
        return web.json_response(history_page(page), headers={"Cache-Control": "no-store"})

    async def _conversations(self, request: web.Request) -> web.Response:
        session = _session(request)
        found = await self._services.list_conversations(ChatRef(PLATFORM, session.chat_id), USER)
        return web.json_response({"conversations": [
            {"id": c.id, "title": c.title, "archived": c.archived, "messages": c.messages,
             "updated_at": c.updated_at.isoformat() if c.updated_at else ""} for c in found]},
            headers={"Cache-Control": "no-store"})

    async def _post(self, request: web.Request) -> web.Response:
        session = _session(request)
        if self._on_message is None:
            return web.json_response({"error": "the web chat is not running"}, status=503)
        try:
            msg = await self._parse(request, session.chat_id)
        except ValueError as e:  # BadMessage, or a body that is not JSON / not a form
            text = str(e) if isinstance(e, BadMessage) else 'send JSON like {"text": "hello"}, or a form with files'
            return web.json_response({"error": text}, status=400)
        try:
            await self._on_message(msg)
        except NotKept:  # the page shows it as not sent: the person sends it again
            return web.json_response({"error": t(lang.pick(request), "not_kept")}, status=503)
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
