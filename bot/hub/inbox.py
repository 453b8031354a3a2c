"""How an accepted message waits in the store's durable inbox: IncomingMessage as JSON and back (the ticket a
turn carries while it answers one is bot/run/turn.py)."""

from __future__ import annotations

import dataclasses
import json
from typing import Any

from bot.messages import Attachment, AttachmentKind, ButtonPress, IncomingMessage, Interaction, Origin, ReplyTo

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
    fields["attachments"] = tuple(Attachment(**{**a, "kind": AttachmentKind.parse(a["kind"])})
                                  for a in fields["attachments"])
    if fields["origin"] is not None:
        origin = dict(fields["origin"])
        kind: Origin = _ORIGINS[origin.pop("kind")](**origin)
        fields["origin"] = kind
    return IncomingMessage(**fields)
