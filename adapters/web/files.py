"""Files in the web chat: uploads wait here until the hub takes them; files the agent sends wait for a click.

Both sides live in memory under byte budgets: an upload is taken within seconds of its post (or dropped
after `STAGED_TTL`), and a sent file stays downloadable until newer ones push it out of the budget.
Every file belongs to one browser session's chat, so a link never opens in another session.
"""

from __future__ import annotations

import secrets
import time
from collections import OrderedDict
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass

from bot.adapter import OutgoingFile, SendFailed
from bot.messages import Attachment, AttachmentKind, ChatRef, SentRef

CHUNK = 64 * 1024
STAGED_TTL = 600.0  # seconds an upload the hub never took is kept
SENT_BUDGET = 64_000_000  # bytes of sent files kept for download, over all sessions
MAX_SEND = 50_000_000  # one file the agent sends
_PICTURES = frozenset({"image/jpeg", "image/png", "image/gif", "image/webp"})


def kind_of(mime: str) -> AttachmentKind:
    """What intake makes of a browser file: pictures go to vision models, audio to transcription."""
    major = mime.partition("/")[0]
    if mime in _PICTURES:
        return AttachmentKind.IMAGE
    return AttachmentKind(major) if major in ("audio", "video") else AttachmentKind.FILE


@dataclass(frozen=True, slots=True)
class SentFile:
    chat_id: str
    file: OutgoingFile


class WebFiles:
    """The web chat's FileTransfer, plus the store behind its upload and download endpoints."""

    max_upload = MAX_SEND

    def __init__(self, publish: Callable[[str, str, dict[str, object]], int],
                 clock: Callable[[], float] = time.monotonic) -> None:
        self._publish = publish
        self._clock = clock
        self._staged: dict[str, tuple[float, bytes]] = {}
        self._sent: OrderedDict[str, SentFile] = OrderedDict()
        self._sent_bytes = 0

    def stage(self, data: bytes) -> str:
        """Keep an uploaded file's bytes until the hub downloads them; returns the attachment handle."""
        now = self._clock()
        for handle, (at, _) in list(self._staged.items()):
            if now - at > STAGED_TTL:
                del self._staged[handle]
        handle = secrets.token_urlsafe(12)
        self._staged[handle] = (now, data)
        return handle

    async def download(self, attachment: Attachment) -> AsyncIterator[bytes]:
        staged = self._staged.pop(attachment.handle, None)
        if staged is None:
            raise SendFailed("the upload is no longer here; please send the file again")
        data = staged[1]
        for start in range(0, len(data), CHUNK):
            yield data[start:start + CHUNK]

    async def upload(self, chat: ChatRef, file: OutgoingFile) -> SentRef:
        token = secrets.token_urlsafe(16)
        self._sent[token] = SentFile(chat.chat_id, file)
        self._sent_bytes += len(file.data)
        while self._sent_bytes > SENT_BUDGET and len(self._sent) > 1:
            _, old = self._sent.popitem(last=False)
            self._sent_bytes -= len(old.file.data)
        self._publish(chat.chat_id, "file", {"id": token, "url": f"/webchat/files/{token}", "name": file.name,
                                             "mime": file.mime, "caption": file.caption, "image": file.is_image,
                                             "voice": file.voice is not None})
        return SentRef(chat, token)

    def sent(self, chat_id: str, token: str) -> OutgoingFile | None:
        """A sent file, only for the chat it was sent to."""
        found = self._sent.get(token)
        return found.file if found is not None and found.chat_id == chat_id else None
