"""Files on Discord: attachments are fetched from the attachment CDN, the agent's files posted as uploads.

An attachment's handle is the URL Discord gave, but a message payload is only as honest as its
sender: a download goes only to the host attachments come from (Discord's CDN, or the configured API
host when one is set, as in tests), never follows a redirect, and stops at a size cap.
"""

from __future__ import annotations

import io
from collections.abc import AsyncIterator, Callable
from urllib.parse import urlsplit

import aiohttp
import discord

from adapters.discord.outbound import DiscordOutbound
from bot.adapter import OutgoingFile, SendFailed
from bot.httpkit.capped import capped
from bot.messages import Attachment, ChatRef, SentRef

MAX_UPLOAD = 10 * 1024 * 1024  # Discord's default upload limit for a bot without boosts
MAX_DOWNLOAD = 100 * 1024 * 1024  # far above the intake's own cap; only a guard against endless bodies
CHUNK = 65_536
CAPTION_LIMIT = 2000
CDN_ORIGINS = frozenset({("https", "cdn.discordapp.com"), ("https", "media.discordapp.net")})
_TIMEOUT = aiohttp.ClientTimeout(total=300, sock_connect=10, sock_read=60)


def attachment_origins(api_base: str | None) -> frozenset[tuple[str, str]]:
    """(scheme, host[:port]) pairs a download may go to: the configured API host when set, else the CDN."""
    if not api_base:
        return CDN_ORIGINS
    parts = urlsplit(api_base)
    return frozenset({(parts.scheme, parts.netloc)})


class DiscordFiles:
    max_upload = MAX_UPLOAD

    def __init__(self, outbound: DiscordOutbound, origins: frozenset[tuple[str, str]],
                 session: Callable[[], aiohttp.ClientSession]) -> None:
        self._outbound = outbound
        self._origins = origins
        self._session = session

    async def download(self, attachment: Attachment) -> AsyncIterator[bytes]:
        url = urlsplit(attachment.handle)
        if (url.scheme, url.netloc) not in self._origins:
            raise SendFailed(f"refused to fetch an attachment from {url.netloc or 'nowhere'!r}: not Discord's CDN")
        try:
            async with self._session().get(attachment.handle, allow_redirects=False, timeout=_TIMEOUT) as response:
                if response.status != 200:
                    raise SendFailed(f"discord CDN answered {response.status}")
                too_big = "discord attachment is larger than any file we take"
                async for chunk in capped(response.content, MAX_DOWNLOAD, too_big, CHUNK):
                    yield chunk
        except (TimeoutError, aiohttp.ClientError) as e:
            raise SendFailed(f"discord CDN unreachable: {type(e).__name__}") from e

    async def upload(self, chat: ChatRef, file: OutgoingFile) -> SentRef:
        if file.voice is not None:
            voice = file.voice
            return SentRef(chat, await self._outbound.post_voice(chat, file.data, voice.duration, voice.waveform))
        upload = discord.File(io.BytesIO(file.data), filename=file.name)
        message_id = await self._outbound.post_file(chat, file.caption[:CAPTION_LIMIT], upload)
        return SentRef(chat, message_id)
