"""Files on the fake Discord: attachment bytes served at their CDN-style URL, multipart message posts.

discord.py sends a message with files as multipart/form-data: the JSON body in `payload_json`, each
file as `files[n]`; the fake records every uploaded file's bytes so a test can compare hashes.
"""

from __future__ import annotations

import hashlib
import itertools
import json
from dataclasses import dataclass
from typing import Any

from aiohttp import web


@dataclass
class Upload:
    channel_id: str
    filename: str
    data: bytes

    @property
    def sha256(self) -> str:
        return hashlib.sha256(self.data).hexdigest()


class AttachmentFiles:
    """Mixed into FakeDiscord: tests attach bytes to a user message; the bot's uploads are kept."""

    port: int

    def __init__(self) -> None:
        self.stored_files: dict[str, bytes] = {}  # URL path → bytes
        self.downloads: list[str] = []  # URL paths the bot fetched
        self.uploads: list[Upload] = []
        self._attached: list[dict[str, Any]] = []  # the files of the request being handled
        self._file_ids = itertools.count(1)

    def attachment(self, filename: str, data: bytes, content_type: str) -> dict[str, Any]:
        """An attachment payload as Discord puts it in MESSAGE_CREATE, its bytes served at `url`."""
        file_id = f"60000000000000{next(self._file_ids):04d}"
        path = f"/attachments/{file_id}/{filename}"
        self.stored_files[path] = data
        url = f"http://127.0.0.1:{self.port}{path}"
        return {"id": file_id, "filename": filename, "size": len(data), "url": url, "proxy_url": url,
                "content_type": content_type}

    async def serve_attachment(self, request: web.Request) -> web.Response:
        data = self.stored_files.get(request.path)
        if data is None:
            return web.Response(status=404)
        self.downloads.append(request.path)
        return web.Response(body=data, content_type="application/octet-stream")

    async def read_body(self, request: web.Request, channel_id: str) -> tuple[Any, list[dict[str, Any]]]:
        """The JSON body of a request, and for a multipart post the attachments it created."""
        if not request.can_read_body:
            return None, []
        if not request.content_type.startswith("multipart/"):
            return await request.json(), []
        body: Any = None
        attached: list[dict[str, Any]] = []
        async for part in await request.multipart():
            if part.name == "payload_json":
                body = json.loads(await part.text())  # type: ignore[union-attr]
            elif part.name and part.name.startswith("files["):
                data = bytes(await part.read())  # type: ignore[union-attr]
                filename = part.filename or "file"  # type: ignore[union-attr]
                self.uploads.append(Upload(channel_id, filename, data))
                attached.append({"id": f"61000000000000{next(self._file_ids):04d}", "filename": filename,
                                 "size": len(data), "url": "", "proxy_url": ""})
        return body, attached
