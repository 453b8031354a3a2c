"""Cards on the fake Feishu, mixed into FakeFeishu: card content as the open platform checks it, and CardKit.

CardKit: create an entity, turn a card message the app sent into one (id_convert: the message shows the entity
from then on, at sequence 0), stream element content (streaming_mode on, a strictly increasing sequence),
settings, full update. An entity can be sent once; cards and entities are at most 30 KB.
"""

from __future__ import annotations

import itertools
import json
from dataclasses import dataclass, field
from typing import Any

from aiohttp import web

from tests.fakes.feishu_cards import CARD_CONTENT_ERROR, check_card

CARD_LIMIT = 30 * 1024  # bytes of a card message / card entity
TOO_LONG = 230025
SEQUENCE_ERROR = 300317  # this fake's code for "sequence must increase"
NOT_STREAMING = 300309  # this fake's code for "element streaming needs streaming_mode"
ELEMENT_NOT_FOUND = 300313  # "not find elementID"
NOT_CONVERTIBLE = 300310  # this fake's code for "id_convert takes a card message (JSON 2.0) the app sent"


def ok(data: Any = None, **top: Any) -> web.Response:
    return web.json_response({"code": 0, "msg": "success", "data": data or {}, **top})


def error(code: int, msg: str, status: int = 400, reset: int | None = None) -> web.Response:
    headers = None if reset is None else {"x-ogw-ratelimit-limit": "50", "x-ogw-ratelimit-reset": str(reset)}
    return web.json_response({"code": code, "msg": msg}, status=status, headers=headers)


@dataclass
class CardEntity:
    card: dict[str, Any]
    sequence: int = 0
    sent: bool = False
    history: list[str] = field(default_factory=list)  # element contents streamed, in order

    @property
    def streaming(self) -> bool:
        return bool(self.card.get("config", {}).get("streaming_mode"))


class CardKit:
    """Mixed into FakeFeishu."""

    messages: dict[str, dict[str, Any]]  # the fake's messages by id

    def __init__(self) -> None:
        self.cards: dict[str, CardEntity] = {}
        self.card_errors: list[str] = []  # why each refused card was refused
        self._card_ids = itertools.count(1)

    def _check_card(self, content: str) -> web.Response | None:
        if len(content.encode()) > CARD_LIMIT:
            return error(TOO_LONG, "card content too long")
        try:
            parsed = json.loads(content)
        except ValueError:
            return self._refuse_card("Failed to create card content, ext=ErrCode: 200621; ErrMsg: parse card json "
                                     "err, please check whether the card json is correct;")
        if parsed.get("type") == "card":
            entity = self.cards.get(str(parsed.get("data", {}).get("card_id")))
            if entity is None:
                return error(230099, "card entity not found")
            if entity.sent:
                return error(230099, "a card entity can be sent only once")
            return None
        problem = check_card(parsed)
        return None if problem is None else self._refuse_card(problem)

    def _refuse_card(self, problem: str) -> web.Response:
        self.card_errors.append(problem)
        return error(CARD_CONTENT_ERROR, problem)

    def _cardkit(self, method: str, p: list[str], body: dict[str, Any]) -> web.Response:
        if method == "POST" and p[3:] == ["id_convert"]:
            return self._id_convert(body)
        if method == "POST" and len(p) == 3:
            data = body.get("data", "")
            if body.get("type") != "card_json" or not isinstance(data, str):
                return error(99992402, "type must be card_json and data a JSON string")
            if len(data.encode()) > CARD_LIMIT:
                return error(TOO_LONG, "card content too long")
            if (card_error := self._check_card(data)) is not None:
                return card_error
            card_id = f"7355{next(self._card_ids):012d}"
            self.cards[card_id] = CardEntity(json.loads(data))
            return ok({"card_id": card_id})
        entity = self.cards.get(p[3]) if len(p) > 3 else None
        if entity is None:
            return error(300301, "card not found")
        sequence = body.get("sequence")
        if not isinstance(sequence, int) or sequence <= entity.sequence:
            return error(SEQUENCE_ERROR, f"sequence {sequence} must be greater than {entity.sequence}")
        if method == "PUT" and len(p) == 7 and p[4] == "elements" and p[6] == "content":
            if not entity.streaming:
                return error(NOT_STREAMING, "card is not in streaming mode")
            element = _find_element(entity.card, p[5])
            if element is None:
                return error(ELEMENT_NOT_FOUND, f"ErrMsg: not find elementID : {p[5]};")
            element["content"] = str(body.get("content", ""))
            if len(json.dumps(entity.card, ensure_ascii=False).encode()) > CARD_LIMIT:
                return error(TOO_LONG, "card content too long")
            entity.history.append(element["content"])
        elif method == "PATCH" and len(p) == 5 and p[4] == "settings":
            settings = json.loads(body.get("settings", "{}"))
            entity.card.setdefault("config", {}).update(settings.get("config", {}))
        elif method == "PUT" and len(p) == 4:
            data = body.get("card", {}).get("data", "{}")
            if (card_error := self._check_card(data)) is not None:
                return card_error
            entity.card = json.loads(data)
        else:
            return error(404, "not found", 404)
        entity.sequence = sequence
        return ok()

    def _id_convert(self, body: dict[str, Any]) -> web.Response:
        """A card message the app sent becomes an entity the message shows from then on (sequence 0); a message
        that already shows one answers its id."""
        message_id = body.get("message_id")
        if not isinstance(message_id, str) or not message_id:
            return error(99992402, "field validation failed: message_id")
        message = self.messages.get(message_id)
        if message is None:
            return error(230001, "message not found")
        if message["msg_type"] != "interactive" or message.get("from_user"):
            return error(NOT_CONVERTIBLE, "only card messages sent by this app can be converted")
        content = json.loads(message["content"])
        if content.get("type") == "card":
            return ok({"card_id": content["data"]["card_id"]})
        if content.get("schema") != "2.0":
            return error(NOT_CONVERTIBLE, "only card JSON 2.0 can be converted")
        card_id = f"7355{next(self._card_ids):012d}"
        self.cards[card_id] = CardEntity(content, sent=True)
        message["content"] = json.dumps({"type": "card", "data": {"card_id": card_id}})
        return ok({"card_id": card_id})


def _find_element(card: dict[str, Any], element_id: str) -> dict[str, Any] | None:
    return next((e for e in card.get("body", {}).get("elements", []) if e.get("element_id") == element_id), None)
