"""Files on DingTalk: a message's files are fetched by download code, the agent's uploaded then sent.

A handle is "<msgtype>/<downloadCode>" (inbound.py). The code is exchanged for a short-lived URL by
robot/messageFiles/download; only that answer's URL is fetched, so nothing a user typed picks a host.
"""

from __future__ import annotations

from collections.abc import AsyncIterator

import aiohttp

from adapters.dingtalk.inbound import KINDS
from adapters.dingtalk.outbound import DingTalkOutbound, failure
from adapters.dingtalk.transport import ApiError, DingTalkHttp
from bot.adapter import OutgoingFile, SendFailed
from bot.httpkit.capped import capped
from bot.messages import Attachment, ChatRef, SentRef

MAX_IMAGE = 20 * 1024 * 1024  # an image media upload; a larger picture goes as a file
MAX_UPLOAD = 20 * 1024 * 1024  # a file media upload
MAX_DOWNLOAD = 100 * 1024 * 1024  # far above the intake's own cap; a guard against endless bodies
CHUNK = 65_536


class DingTalkFiles:
    max_upload = MAX_UPLOAD

    def __init__(self, http: DingTalkHttp, outbound: DingTalkOutbound) -> None:
        self._http = http
        self._outbound = outbound

    async def download(self, attachment: Attachment) -> AsyncIterator[bytes]:
        kind, _, code = attachment.handle.partition("/")
        if kind not in KINDS or not code:
            raise SendFailed(f"not a dingtalk file: {attachment.handle!r}")
        try:
            answer = await self._http.call("POST", "/v1.0/robot/messageFiles/download",
                                           {"downloadCode": code, "robotCode": self._http.client_id})
            url = answer.get("downloadUrl")
            if not isinstance(url, str) or not url.startswith(("https://", "http://")):
                raise SendFailed("dingtalk gave no download URL for the file")
            async with self._http.fetch(url) as stream:
                async for chunk in capped(stream, MAX_DOWNLOAD, "dingtalk file is larger than any file we take", CHUNK):
                    yield chunk
        except (ApiError, aiohttp.ClientError, TimeoutError) as e:
            raise failure(e) from e

    async def upload(self, chat: ChatRef, file: OutgoingFile) -> SentRef:
        try:
            if file.is_image and len(file.data) <= MAX_IMAGE:
                media = await self._http.upload("image", file.name, file.data, file.mime)
                key, param = "sampleImageMsg", {"photoURL": media}
            else:
                media = await self._http.upload("file", file.name, file.data, file.mime)
                kind = file.name.rpartition(".")[2].lower() if "." in file.name else "file"
                key, param = "sampleFile", {"mediaId": media, "fileName": file.name, "fileType": kind}
        except (ApiError, aiohttp.ClientError, TimeoutError) as e:
            raise failure(e) from e
        sent = await self._outbound.post(chat, key, param)
        if file.caption:  # image and file messages carry no text of their own
            await self._outbound.post(chat, "sampleText", {"content": file.caption})
        return SentRef(chat, sent)
