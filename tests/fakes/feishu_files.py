"""Files on the fake Feishu: message resources by key, image and file uploads (multipart), kept for tests.

A resource is served only for the message it belongs to and with the right `type` (image keys with
type=image, file keys with type=file), as the real route insists.
"""

from __future__ import annotations

import hashlib
import itertools
import json
from dataclasses import dataclass
from typing import Any

from aiohttp import web

IMAGE_LIMIT = 10 * 1024 * 1024
FILE_LIMIT = 30 * 1024 * 1024
FILE_TYPES = ("opus", "mp4", "pdf", "doc", "xls", "ppt", "stream")


@dataclass
class Uploaded:
    kind: str  # "image" | "file"
    name: str
    data: bytes
    file_type: str = ""  # a file's: "opus" files may be sent as audio messages
    duration: int | None = None  # ms, given with an opus upload

    @property
    def sha256(self) -> str:
        return hashlib.sha256(self.data).hexdigest()


class ResourceFiles:
    """Mixed into FakeFeishu."""

    def __init__(self) -> None:
        self.resources: dict[tuple[str, str], bytes] = {}  # (message_id, key) → bytes a user sent
        self.uploaded: dict[str, Uploaded] = {}  # image_key / file_key → what the bot uploaded
        self.downloads: list[tuple[str, str, str]] = []  # (message_id, key, type) the bot fetched
        self._keys = itertools.count(1)

    def put_resource(self, message_id: str, data: bytes, *, image: bool) -> str:
        """Store what a user attached to a message; returns its image_key or file_key."""
        key = f"{'img_v3' if image else 'file_v3'}_{next(self._keys)}"
        self.resources[(message_id, key)] = data
        return key

    @staticmethod
    async def read_body(request: web.Request) -> Any:
        """JSON, or for a multipart upload a dict of its fields (a file field as (file name, bytes))."""
        if not request.can_read_body:
            return None
        if not request.content_type.startswith("multipart/"):
            return await request.json()
        fields: dict[str, Any] = {}
        async for part in await request.multipart():
            if part.filename is not None:  # type: ignore[union-attr]
                fields[str(part.name)] = (part.filename, bytes(await part.read()))  # type: ignore[union-attr]
            else:
                fields[str(part.name)] = await part.text()  # type: ignore[union-attr]
        return fields

    def resource(self, message_id: str, key: str, query: dict[str, str]) -> web.Response:
        data = self.resources.get((message_id, key))
        expected = "image" if key.startswith("img_") else "file"
        if data is None or query.get("type") != expected:
            return web.json_response({"code": 234003, "msg": "File not in msg."}, status=400)
        self.downloads.append((message_id, key, expected))
        return web.Response(body=data, content_type="application/octet-stream")

    def upload(self, kind: str, form: Any) -> web.Response:
        if not isinstance(form, dict):
            return _invalid("multipart/form-data expected")
        if kind == "images":
            image = form.get("image")
            if form.get("image_type") not in ("message", "avatar") or not isinstance(image, tuple):
                return _invalid("image_type and image are required")
            if len(image[1]) > IMAGE_LIMIT:
                return web.json_response({"code": 234006, "msg": "The image size exceeds 10 MB."}, status=400)
            key = f"img_v3_{next(self._keys)}"
            self.uploaded[key] = Uploaded("image", image[0], image[1])
            return web.json_response({"code": 0, "msg": "success", "data": {"image_key": key}})
        file = form.get("file")
        if form.get("file_type") not in FILE_TYPES or not form.get("file_name") or not isinstance(file, tuple):
            return _invalid("file_type, file_name and file are required")
        if len(file[1]) > FILE_LIMIT:
            return web.json_response({"code": 234006, "msg": "The file size exceeds 30 MB."}, status=400)
        duration = form.get("duration")
        if form["file_type"] == "opus" and not (isinstance(duration, str) and duration.isdigit()):
            return _invalid("duration (milliseconds) is required for an opus file")
        if form["file_type"] == "opus" and not (file[1].startswith(b"OggS") and b"OpusHead" in file[1][:200]):
            return web.json_response({"code": 234010, "msg": "The file type is not opus."}, status=400)
        key = f"file_v3_{next(self._keys)}"
        self.uploaded[key] = Uploaded("file", str(form["file_name"]), file[1], str(form["file_type"]),
                                      int(duration) if isinstance(duration, str) and duration.isdigit() else None)
        return web.json_response({"code": 0, "msg": "success", "data": {"file_key": key}})

    def known_key(self, msg_type: str, content: str) -> bool:
        """An image, file or audio message must name a key this app uploaded (audio: an opus file)."""
        field = "image_key" if msg_type == "image" else "file_key"
        try:
            key = json.loads(content).get(field)
        except (ValueError, AttributeError):
            return False
        found = self.uploaded.get(key)
        return found is not None and (msg_type != "audio" or found.file_type == "opus")


def _invalid(why: str) -> web.Response:
    return web.json_response({"code": 99992402, "msg": f"field validation failed: {why}"}, status=400)
