"""Files on WeCom: what users send is fetched from its short-lived URL (valid about five minutes) and
decrypted with the message's own aeskey; what the bot sends is uploaded over the long connection in chunks
(init → chunk × n → finish gives a media_id), then posted as an image or file message.

The URL and key of a handle ("<msgid>/<n>", inbound.py) stay in memory only: they come from WeCom's
authenticated frames, so nothing a user typed picks a host.
"""

from __future__ import annotations

import base64
import hashlib
from collections.abc import AsyncIterator
from typing import Any

import aiohttp

from adapters.wecom import crypto
from adapters.wecom.inbound import Media
from adapters.wecom.outbound import WeComOutbound
from bot.adapter import OutgoingFile, SendFailed
from bot.httpkit.recent import Recent
from bot.messages import Attachment, ChatRef, SentRef
from bot.replies import Reply

MAX_DOWNLOAD = 100 * 1024 * 1024  # a guard against endless bodies, far above the intake's own cap
CHUNK = 65_536
UPLOAD_CHUNK = 512 * 1024  # WeCom's largest upload chunk; at most MAX_CHUNKS of them
MAX_CHUNKS = 100
MIN_UPLOAD = 5  # bytes: WeCom refuses smaller files
MAX_IMAGE = 10 * 1024 * 1024  # an image message; a larger picture goes as a file
MAX_UPLOAD = 20 * 1024 * 1024  # a file message


class WeComFiles:
    max_upload = MAX_UPLOAD

    def __init__(self, session: aiohttp.ClientSession, outbound: WeComOutbound | None, max_bytes: int) -> None:
        """`outbound` None: callback mode, which can fetch what users send but has no upload."""
        self._session = session
        self._outbound = outbound
        self._max = min(max_bytes, MAX_DOWNLOAD)
        self._media: Recent[Media] = Recent()

    def remember(self, msgid: str, media: tuple[Media, ...]) -> None:
        for n, item in enumerate(media):
            self._media.put(f"{msgid}/{n}", item)

    async def download(self, attachment: Attachment) -> AsyncIterator[bytes]:
        """WeCom's cipher needs the whole file, so it is read (up to the cap) and decrypted at once."""
        media = self._media.get(attachment.handle)
        if media is None:
            raise SendFailed(f"wecom file {attachment.handle!r} is no longer known (its link lasts minutes)")
        data = bytearray()
        try:
            async with self._session.get(media.url) as resp:
                if resp.status != 200:
                    raise SendFailed(f"wecom answered {resp.status} for the file")
                async for chunk in resp.content.iter_chunked(CHUNK):
                    data += chunk
                    if len(data) > self._max + crypto.BLOCK:
                        raise SendFailed("wecom file is larger than the size cap")
            plain = crypto.decrypt_bytes(crypto.key_of(media.aeskey), bytes(data))
        except (aiohttp.ClientError, TimeoutError) as e:
            raise SendFailed(f"wecom file download failed: {e}") from e
        except crypto.CryptoError as e:
            raise SendFailed(f"wecom file could not be decrypted: {e}") from e
        for start in range(0, len(plain), CHUNK):
            yield plain[start:start + CHUNK]

    async def upload(self, chat: ChatRef, file: OutgoingFile) -> SentRef:
        if self._outbound is None:
            raise SendFailed("WeCom's callback mode cannot send files; the long connection can")
        if len(file.data) < MIN_UPLOAD:
            raise SendFailed(f"WeCom takes no file under {MIN_UPLOAD} bytes")
        kind = "image" if file.is_image and len(file.data) <= MAX_IMAGE else "file"
        media_id = await self._upload(kind, file)
        ref = await self._outbound.post(chat, {"msgtype": kind, kind: {"media_id": media_id}})
        if file.caption:  # image and file messages carry no text of their own
            await self._outbound.send(chat, Reply(file.caption), final=True)
        return ref

    async def _upload(self, kind: str, file: OutgoingFile) -> str:
        assert self._outbound is not None
        chunks = [file.data[i:i + UPLOAD_CHUNK] for i in range(0, len(file.data), UPLOAD_CHUNK)]
        if len(chunks) > MAX_CHUNKS:
            raise SendFailed(f"{file.name} is too large for WeCom's upload")
        init = await self._outbound.call("aibot_upload_media_init", {
            "type": kind, "filename": file.name, "total_size": len(file.data), "total_chunks": len(chunks),
            "md5": hashlib.md5(file.data).hexdigest()})
        upload_id = _field(init, "upload_id")
        for index, chunk in enumerate(chunks):
            await self._outbound.call("aibot_upload_media_chunk", {
                "upload_id": upload_id, "chunk_index": index, "base64_data": base64.b64encode(chunk).decode()})
        return _field(await self._outbound.call("aibot_upload_media_finish", {"upload_id": upload_id}), "media_id")


def _field(ack: dict[str, Any], name: str) -> str:
    body = ack.get("body")
    value = body.get(name) if isinstance(body, dict) else None
    if not isinstance(value, str) or not value:
        raise SendFailed(f"WeCom's upload answered no {name}")
    return value
