"""After the answer: the same text as voice notes, when the chat asked for voice (`/voice`, bot/media/speech.py).

It runs once the answer is delivered and stored, so the text is the record and a failed speech request costs
only the voice (the chat is told in one line). `auto` answers with voice only a message that came as audio.
"""

from __future__ import annotations

import logging

from bot.adapter import OutgoingFile
from bot.agent.provider import LLMError
from bot.delivery import Delivery
from bot.i18n import t
from bot.media.speech import OGG_MIME, Speak, SpeechFailed, voice_notes
from bot.replies import Reply
from bot.run.turn import TurnContext

log = logging.getLogger("bothub.voice")


class VoiceReplies:
    def __init__(self, speak: Speak | None, default_mode: str) -> None:
        self.speak, self.default_mode = speak, default_mode

    def wanted(self, chosen: str | None, turn: TurnContext) -> bool:
        mode = chosen or self.default_mode
        spoken_to = any(f.kind == "audio" for f in turn.files)
        return self.speak is not None and (mode == "on" or (mode == "auto" and spoken_to))

    async def send(self, turn: TurnContext, text: str, delivery: Delivery) -> None:
        assert self.speak is not None
        try:
            notes = await voice_notes(self.speak, text, t(turn.lang, "voice_code"))
        except (LLMError, SpeechFailed) as e:
            log.warning("no voice reply in %s: %s", turn.chat.chat_id, e)
            await delivery.send(turn.chat, Reply(t(turn.lang, "speech_failed")))
            return
        for n, spoken in enumerate(notes, 1):
            name = "answer.ogg" if len(notes) == 1 else f"answer-{n}.ogg"
            await delivery.send_file(turn.chat, OutgoingFile(spoken.data, name, OGG_MIME, voice=spoken.note))
