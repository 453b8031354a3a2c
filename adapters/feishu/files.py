"""Files on Feishu: a message's resources are fetched by key, the agent's files uploaded then sent by key.

A handle is "<message_id>/<file_key or image_key>/<image|file>" (inbound.py makes it), which is all
the message-resource route needs; the key never names a host, so nothing user-supplied picks where
the bytes come from.
"""

from __future__ import annotations

from collections.abc import AsyncIterator

import aiohttp

from adapters.feishu.outbound import FeishuOutbound, failure
from adapters.feishu.transport import ApiError, FeishuHttp, Form, data_field
from bot.adapter import OutgoingFile, SendFailed
from bot.httpkit.capped import capped
from bot.messages import Attachment, ChatRef, SentRef

MAX_IMAGE = 10 * 1024 * 1024  # Feishu's limit for an uploaded image; a larger picture goes as a file
MAX_UPLOAD = 30 * 1024 * 1024  # Feishu's limit for an uploaded file
MAX_DOWNLOAD = 100 * 1024 * 1024  # far above the intake's own cap; only a guard against endless bodies
CHUNK = 65_536
RESOURCE_TYPES = ("image", "file")


def resource_handle(message_id: str, key: str, resource_type: str) -> str:
    return f"{message_id}/{key}/{resource_type}"


class FeishuFiles:
    max_upload = MAX_UPLOAD

    def __init__(self, http: FeishuHttp, outbound: FeishuOutbound) -> None:
        self._http = http
        self._outbound = outbound

    async def download(self, attachment: Attachment) -> AsyncIterator[bytes]:
        message_id, _, rest = attachment.handle.partition("/")
        key, _, resource_type = rest.partition("/")
        if not (message_id and key) or resource_type not in RESOURCE_TYPES or "/" in key:
            raise SendFailed(f"not a feishu resource: {attachment.handle!r}")
        path = f"/open-apis/im/v1/messages/{message_id}/resources/{key}"
        try:
            async with self._http.download(path, {"type": resource_type}) as stream:
                too_big = "feishu resource is larger than any file we take"
                async for chunk in capped(stream, MAX_DOWNLOAD, too_big, CHUNK):
                    yield chunk
        except (ApiError, aiohttp.ClientError, TimeoutError) as e:
            raise failure(e) from e

    async def upload(self, chat: ChatRef, file: OutgoingFile) -> SentRef:
        try:
            if file.voice is not None:  # OGG/Opus, with its length: an audio message people can play in place
                milliseconds = str(round(file.voice.duration * 1000))
                form: Form = {"file_type": "opus", "file_name": file.name, "duration": milliseconds,
                              "file": (file.name, file.data)}
                answer = await self._http.call("POST", "/open-apis/im/v1/files", form=form)
                msg_type, content = "audio", {"file_key": data_field(answer, "file_key")}
            elif file.is_image and len(file.data) <= MAX_IMAGE:
                answer = await self._http.call("POST", "/open-apis/im/v1/images",
                                               form={"image_type": "message", "image": (file.name, file.data)})
                msg_type, content = "image", {"image_key": data_field(answer, "image_key")}
            else:
                form = {"file_type": "stream", "file_name": file.name, "file": (file.name, file.data)}
                answer = await self._http.call("POST", "/open-apis/im/v1/files", form=form)
                msg_type, content = "file", {"file_key": data_field(answer, "file_key")}
        except (ApiError, aiohttp.ClientError, TimeoutError) as e:
            raise failure(e) from e
        message_id = await self._outbound.post(chat, msg_type, content)
        if file.caption:  # image and file messages carry no text of their own
            await self._outbound.post(chat, "text", {"text": file.caption})
        return SentRef(chat, message_id)
