"""Files on Slack: what users share (files.info, then the private URL fetched with the bot token, streamed
with the size cap) and what the agent sends (the external upload flow: files.getUploadURLExternal, the bytes
to the upload URL, files.completeUploadExternal into the channel or thread).

Slack answers an unauthenticated private-file request with its sign-in page and status 200, so an HTML answer
to a file that is not HTML is refused rather than saved as the file.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable

import aiohttp

from adapters.slack.outbound import SlackOutbound
from bot.adapter import OutgoingFile, SendFailed
from bot.messages import Attachment, ChatRef, SentRef

MAX_UPLOAD = 1_000_000_000  # Slack takes files up to 1 GB
CHUNK = 65_536


class SlackFiles:
    max_upload = MAX_UPLOAD

    def __init__(self, outbound: SlackOutbound, token: str, max_bytes: int,
                 session: Callable[[], aiohttp.ClientSession]) -> None:
        self._outbound = outbound
        self._token = token
        self._max_bytes = max_bytes
        self._session = session

    async def download(self, attachment: Attachment) -> AsyncIterator[bytes]:
        nowhere = ChatRef("slack", "")
        info = await self._outbound.call(nowhere, lambda: self._outbound.web.files_info(file=attachment.handle))
        meta = info.get("file") or {}
        url = meta.get("url_private_download") or meta.get("url_private")
        if not url:
            raise SendFailed("Slack gave no download URL for the file")
        size = meta.get("size")
        if isinstance(size, int) and size > self._max_bytes:
            raise SendFailed(f"file is {size} bytes, over the {self._max_bytes} byte cap")
        headers = {"Authorization": f"Bearer {self._token}"}
        try:
            async with self._session().get(url, headers=headers, allow_redirects=False) as resp:
                if resp.status != 200:
                    raise SendFailed(f"Slack answered {resp.status} for the file")
                if resp.content_type == "text/html" and not str(meta.get("mimetype", "")).startswith("text/html"):
                    raise SendFailed("Slack sent its sign-in page instead of the file (is files:read granted?)")
                got = 0
                async for chunk in resp.content.iter_chunked(CHUNK):
                    got += len(chunk)
                    if got > self._max_bytes:
                        raise SendFailed(f"file is over the {self._max_bytes} byte cap")
                    yield chunk
        except aiohttp.ClientError as e:
            raise SendFailed(f"file download failed: {type(e).__name__}") from e

    async def upload(self, chat: ChatRef, file: OutgoingFile) -> SentRef:
        answer = await self._outbound.call(chat, lambda: self._outbound.web.files_upload_v2(
            channel=chat.chat_id, thread_ts=chat.thread_id, content=file.data, filename=file.name, title=file.name,
            initial_comment=file.caption or None))
        shared = answer.get("file") or {}
        return SentRef(chat, str(shared.get("id") or ""))
