"""How an accepted message waits in the store's durable inbox: IncomingMessage as JSON and back, and the
ticket a turn carries while it answers one."""

from __future__ import annotations

import dataclasses
import json
from dataclasses import dataclass
from typing import Any

from bot.messages import Attachment, ButtonPress, IncomingMessage, Interaction, Origin, ReplyTo
from bot.store import InboxStore

_ORIGINS: dict[str, type[ReplyTo | ButtonPress | Interaction]] = {
    "reply_to": ReplyTo, "button_press": ButtonPress, "interaction": Interaction,
}
_ORIGIN_NAMES = {kind: name for name, kind in _ORIGINS.items()}


def encode_message(msg: IncomingMessage) -> str:
    fields = {f.name: getattr(msg, f.name) for f in dataclasses.fields(msg)}
    fields["attachments"] = [dataclasses.asdict(a) for a in msg.attachments]
    if msg.origin is not None:
        fields["origin"] = {"kind": _ORIGIN_NAMES[type(msg.origin)], **dataclasses.asdict(msg.origin)}
    return json.dumps(fields, ensure_ascii=False)


def decode_message(event: str) -> IncomingMessage:
    fields: dict[str, Any] = json.loads(event)
    fields["attachments"] = tuple(Attachment(**a) for a in fields["attachments"])
    if fields["origin"] is not None:
        origin = dict(fields["origin"])
        kind: Origin = _ORIGINS[origin.pop("kind")](**origin)
        fields["origin"] = kind
    return IncomingMessage(**fields)


@dataclass
class Ticket:
    """The inbox entry a turn answers. The ids of the reply's messages are stored as they are sent, so after a
    crash the reply is completed by editing them (`replies`); the answer is stored together with the entry's
    finish (one round trip), and `finished` tells the hub it has nothing left to do."""

    entry: int
    inbox: InboxStore
    replies: tuple[str, ...] = ()
    finished: bool = False

    async def sent(self, message_ids: list[str]) -> None:
        await self.inbox.replied(self.entry, message_ids)
