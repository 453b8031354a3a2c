"""A message's attachments, taken in its session's lane: saved to the chat's folder, voice transcribed.

Each refusal (too big, empty, not what it claims, too many) gets its own polite line and costs the other
files nothing; a file that fails leaves nothing behind (bot/media/intake.py).
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from datetime import date
from pathlib import Path

from bot.adapter import FileTransfer, SendError
from bot.config import MediaConfig
from bot.i18n import t
from bot.media.intake import MediaLimits, MediaRefused, save
from bot.messages import AttachmentKind, IncomingMessage
from bot.tree.model import AttachedFile

log = logging.getLogger("bothub.media")

TAKEN = frozenset({AttachmentKind.IMAGE, AttachmentKind.FILE, AttachmentKind.AUDIO, AttachmentKind.VIDEO})
# stickers, shared cards etc. get the text-only line
Transcribe = Callable[[Path], Awaitable[str]]  # an audio file → its text


@dataclass
class Intake:
    text: str  # what the user said: their text, or a voice message's transcript
    files: tuple[AttachedFile, ...] = ()
    notices: list[str] = field(default_factory=list)  # lines for the user (refusals, the transcript)


class MediaIntake:
    def __init__(self, cfg: MediaConfig, transcribe: Transcribe | None,
                 today: Callable[[], date] = date.today) -> None:
        self.limits = MediaLimits(cfg.max_bytes, cfg.max_image_px, cfg.max_files)
        self.transcribe = transcribe
        self.today = today

    async def take(self, msg: IncomingMessage, workdir: Path, transfer: FileTransfer, lang: str) -> Intake:
        intake = Intake(msg.text.strip())
        wanted = [a for a in msg.attachments if a.kind in TAKEN and a.handle]
        if len(wanted) > self.limits.max_files:
            intake.notices.append(t(lang, "media_too_many", limit=self.limits.max_files))
            return intake
        if len(wanted) < len(msg.attachments) and not wanted and not intake.text:
            intake.notices.append(t(lang, "text_only"))
        saved: list[AttachedFile] = []
        for attachment in wanted:
            if attachment.kind == AttachmentKind.AUDIO and self.transcribe is None:
                intake.notices.append(t(lang, "voice_disabled"))
                continue
            try:
                stored = await save(transfer.download(attachment), workdir, attachment, self.limits, self.today())
            except MediaRefused as e:
                intake.notices.append(t(lang, f"media_{e.reason}", **e.values))
                continue
            except SendError as e:
                log.warning("could not fetch %s from %s: %s", attachment.kind, msg.platform, e)
                intake.notices.append(t(lang, "media_fetch_failed", name=attachment.name or attachment.kind))
                continue
            if stored.kind == "audio" and self.transcribe is not None:
                heard = await self._transcript(workdir / stored.path)
                if heard is None:
                    intake.notices.append(t(lang, "voice_failed"))
                    continue
                intake.notices.append(f"🎤 {heard}")
                intake.text = f"{intake.text}\n{heard}".strip()
            saved.append(stored)
        intake.files = tuple(saved)
        return intake

    async def _transcript(self, path: Path) -> str | None:
        assert self.transcribe is not None
        try:
            return (await self.transcribe(path)).strip() or None
        except Exception as e:
            log.warning("transcription failed: %s", e)
            return None
