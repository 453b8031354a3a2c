"""Files on the fake Slack: what users shared (files.info, then an authenticated download of
url_private_download) and what the bot posts (files.getUploadURLExternal → POST the bytes to the upload URL →
files.completeUploadExternal shares it in the channel).

Like Slack, a download without the bot token is not refused with an error: it answers 200 with the sign-in
page (HTML), which a careless client would save as the file.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass
from typing import Any

from aiohttp import web

from tests.fakes.slack_rules import ApiError, SlackApp, json_field

LOGIN_PAGE = "<!DOCTYPE html><html><body>Sign in to Slack</body></html>"


@dataclass
class StoredFile:
    id: str
    name: str
    mime: str
    data: bytes


@dataclass
class Upload:
    """A file the bot posted, with its bytes and where it was shared."""

    file_id: str
    name: str
    data: bytes
    channel: str | None = None
    thread_ts: str | None = None
    title: str = ""
    comment: str = ""


class FileMethods:
    port: int
    apps: dict[str, SlackApp]  # every app installed: any of their bot tokens may download

    def __init__(self) -> None:
        self.files: dict[str, StoredFile] = {}
        self.uploads: dict[str, Upload] = {}
        self.downloads: list[tuple[str, bool]] = []  # (file id, with the bot token)
        self._expected: dict[str, int] = {}  # upload file id → the length announced
        self._file_ids = itertools.count(1)

    def add_file_routes(self, app: web.Application) -> None:
        app.router.add_get("/files-pri/{id}/{name}", self._serve)
        app.router.add_post("/upload/v1/{id}", self._receive)

    def store_file(self, name: str, mime: str, data: bytes) -> dict[str, Any]:
        """A file a user shared: the `files` entry of the message event carrying it."""
        stored = StoredFile(f"F{next(self._file_ids):07d}", name, mime, data)
        self.files[stored.id] = stored
        return self._file_object(stored)

    def _file_object(self, stored: StoredFile) -> dict[str, Any]:
        url = f"http://127.0.0.1:{self.port}/files-pri/{stored.id}/{stored.name}"
        return {"id": stored.id, "name": stored.name, "mimetype": stored.mime, "size": len(stored.data),
                "filetype": stored.name.rsplit(".", 1)[-1], "url_private": url, "url_private_download": url + "?dl=1"}

    def m_files_info(self, params: dict[str, Any]) -> dict[str, Any]:
        stored = self.files.get(str(params.get("file", "")))
        if stored is None:
            raise ApiError("file_not_found")
        return {"file": self._file_object(stored)}

    async def _serve(self, request: web.Request) -> web.StreamResponse:
        stored = self.files.get(request.match_info["id"])
        authed = request.headers.get("Authorization") in {f"Bearer {a.bot_token}" for a in self.apps.values()}
        self.downloads.append((request.match_info["id"], authed))
        if not authed:
            return web.Response(text=LOGIN_PAGE, content_type="text/html")
        if stored is None:
            raise web.HTTPNotFound()
        return web.Response(body=stored.data, content_type=stored.mime)

    def m_files_getUploadURLExternal(self, params: dict[str, Any]) -> dict[str, Any]:
        name, length = params.get("filename"), str(params.get("length", ""))
        if not name or not length.isdigit() or int(length) <= 0:
            raise ApiError("invalid_arguments")
        file_id = f"F{next(self._file_ids):07d}"
        self.uploads[file_id] = Upload(file_id, str(name), b"")
        self._expected[file_id] = int(length)
        return {"upload_url": f"http://127.0.0.1:{self.port}/upload/v1/{file_id}", "file_id": file_id}

    async def _receive(self, request: web.Request) -> web.StreamResponse:
        upload = self.uploads.get(request.match_info["id"])
        if upload is None:
            raise web.HTTPNotFound()
        data = await request.read()
        if len(data) != self._expected.get(upload.file_id):
            return web.Response(status=400, text="length mismatch")
        upload.data = data
        return web.Response(text=f"OK - {len(data)}")

    def m_files_completeUploadExternal(self, params: dict[str, Any]) -> dict[str, Any]:
        entries = json_field(params, "files")
        if not isinstance(entries, list) or not entries:
            raise ApiError("invalid_arguments")
        channel = params.get("channel_id")
        if channel is not None:
            self._channel(params, "channel_id")  # type: ignore[attr-defined]
        shared = []
        for entry in entries:
            upload = self.uploads.get(str(entry.get("id", "")))
            if upload is None or not upload.data:
                raise ApiError("file_not_found")  # never uploaded, or its bytes never arrived
            upload.channel, upload.thread_ts = channel, params.get("thread_ts")
            upload.title, upload.comment = str(entry.get("title") or ""), str(params.get("initial_comment") or "")
            shared.append({"id": upload.file_id, "name": upload.name, "title": upload.title})
        return {"files": shared}
