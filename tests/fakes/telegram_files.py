"""Files on the fake Bot API: getFile and the file download route, sendPhoto and sendDocument uploads."""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from typing import Any

from aiohttp import web

from tests.fakes.telegram_rules import ApiError

DOWNLOAD_LIMIT = 20 * 1024 * 1024  # the Bot API serves files up to 20 MB ("file is too big" above)


@dataclass
class Upload:
    method: str
    chat_id: int
    filename: str
    data: bytes
    caption: str | None

    @property
    def sha256(self) -> str:
        return hashlib.sha256(self.data).hexdigest()


class FileMethods:
    """Mixed into FakeTelegram: tests put bytes under a file_id; the bot fetches them the Bot API way."""

    token: str
    stored_files: dict[str, bytes]
    uploads: list[Upload]
    downloads: list[str]

    async def _m_getFile(self, p: dict[str, Any]) -> dict[str, Any]:
        file_id = p["file_id"]
        data = self.stored_files.get(file_id)
        if data is None:
            raise ApiError(400, "Bad Request: invalid file_id")
        if len(data) > DOWNLOAD_LIMIT:
            raise ApiError(400, "Bad Request: file is too big")
        return {"file_id": file_id, "file_unique_id": f"u{file_id}", "file_size": len(data),
                "file_path": f"documents/{file_id}.bin"}

    async def serve_file(self, request: web.Request) -> web.Response:
        if request.match_info["token"] != self.token:
            return web.Response(status=401)
        file_id = request.match_info["path"].removeprefix("documents/").removesuffix(".bin")
        data = self.stored_files.get(file_id)
        if data is None:
            return web.Response(status=404)
        self.downloads.append(file_id)
        return web.Response(body=data, content_type="application/octet-stream")

    def _upload(self, method: str, field: str, p: dict[str, Any]) -> Upload:
        upload = p.get(f"_file:{field}")
        if upload is None:
            raise ApiError(400, f"Bad Request: there is no {field} in the request")
        filename, data = upload
        if not data:
            raise ApiError(400, "Bad Request: file must be non-empty")
        return Upload(method, int(p["chat_id"]), filename, data, p.get("caption"))
