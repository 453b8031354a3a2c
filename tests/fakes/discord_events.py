"""What the fake Discord sends the bot: MESSAGE_CREATE and INTERACTION_CREATE payloads as the gateway carries them,
and the interactions it then expects acknowledged (ids, tokens, deadlines)."""

from __future__ import annotations

import itertools
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from tests.fakes.discord_guild import (
    CHANNEL_ID,
    DM_CHANNEL_ID,
    GUILD_ID,
    HUMAN,
    THREAD2_ID,
    THREAD_ID,
    USER_ID,
    now_iso,
)


@dataclass
class Interaction:
    interaction_id: str
    type: int
    channel_id: str
    created: float  # unix seconds, from the snowflake
    original_id: str | None = None  # the message @original points at once acknowledged
    acked: bool = False


class DiscordEvents:
    """Payload builders of FakeDiscord (it provides the state below)."""

    clock: Callable[[], float]
    app_id: str
    messages: dict[str, dict]
    dm_channels: set[str]
    _interactions: dict[str, Interaction]
    _serial: itertools.count[int]

    def snowflake(self, age: float = 0.0) -> str:
        raise NotImplementedError

    def user_message(self, content: str, *, channel_id: str = CHANNEL_ID, dm: bool = False,
                     author: dict = HUMAN, mentions: tuple[dict, ...] = (), mention_everyone: bool = False,
                     referenced: dict | None = None, message_id: str | None = None, **extra: Any) -> dict:
        data: dict[str, Any] = {
            "id": message_id or self.snowflake(),
            "channel_id": (channel_id if channel_id in self.dm_channels else DM_CHANNEL_ID) if dm else channel_id,
            "author": author, "content": content, "timestamp": now_iso(), "edited_timestamp": None,
            "tts": False, "mention_everyone": mention_everyone, "mentions": list(mentions),
            "mention_roles": [], "attachments": [], "embeds": [], "pinned": False, "flags": 0,
            "type": 19 if referenced else 0, **extra}
        if referenced is not None:
            data["referenced_message"] = referenced
            data["message_reference"] = {"message_id": referenced["id"], "channel_id": referenced["channel_id"]}
        if not dm:
            data.setdefault("guild_id", GUILD_ID)  # a test may name another guild
            data["member"] = {"roles": [], "joined_at": now_iso(), "deaf": False, "mute": False, "flags": 0}
        return data

    def interaction(self, itype: int, data: dict, *, channel_id: str = CHANNEL_ID, dm: bool = False,
                    group_dm: bool = False, age: float = 0.0, message: dict | None = None) -> dict:
        """`dm`: a one-to-one DM (channel type 1); `group_dm`: a group DM (type 3, no guild)."""
        dm = dm or group_dm
        interaction_id, token = self.snowflake(age), f"itoken-{next(self._serial)}"
        channel_id = DM_CHANNEL_ID if dm else channel_id
        self._interactions[token] = Interaction(interaction_id, itype, channel_id, self.clock() - age,
                                                 original_id=message["id"] if message else None)
        payload: dict[str, Any] = {
            "id": interaction_id, "application_id": self.app_id, "type": itype, "token": token, "version": 1,
            "data": data, "channel_id": channel_id, "locale": "en-US", "app_permissions": "2248473465835073",
            "entitlements": [], "attachment_size_limit": 26214400,
            "authorizing_integration_owners": {"0": GUILD_ID} if not dm else {"1": USER_ID},
            "context": 1 if dm else 0}
        if dm:
            payload["user"] = HUMAN
            payload["channel"] = {"id": channel_id, "type": 3 if group_dm else 1, "recipients": [HUMAN]}
            payload["context"] = 2 if group_dm else 1
        else:
            payload["guild_id"] = GUILD_ID
            payload["guild_locale"] = "en-US"
            payload["channel"] = {"id": channel_id, "type": 11 if channel_id in (THREAD_ID, THREAD2_ID) else 0,
                                  "guild_id": GUILD_ID}
            payload["member"] = {"user": HUMAN, "roles": [], "joined_at": now_iso(), "deaf": False,
                                 "mute": False, "flags": 0, "permissions": "2248473465835073"}
        if message is not None:
            payload["message"] = message
        return payload

    def replay(self, recorded: dict, message: dict | None = None) -> dict:
        """A recorded interaction payload, re-stamped with a fresh id and token this fake will accept."""
        payload = {**recorded, "id": self.snowflake(), "token": f"itoken-{next(self._serial)}"}
        if message is not None:
            payload["message"] = message
        self._interactions[payload["token"]] = Interaction(payload["id"], payload["type"], payload["channel_id"],
                                                            time.time(), original_id=message["id"] if message else None)
        return payload

    def slash(self, name: str, options: dict[str, Any] | None = None, **where: Any) -> dict:
        opts = [{"name": k, "type": _option_type(v), "value": v} for k, v in (options or {}).items()]
        return self.interaction(2, {"id": self.snowflake(), "name": name, "type": 1, "options": opts}, **where)

    def autocomplete(self, name: str, option: str, typed: str, **where: Any) -> dict:
        focused = [{"name": option, "type": 3, "value": typed, "focused": True}]
        return self.interaction(4, {"id": self.snowflake(), "name": name, "type": 1, "options": focused}, **where)

    def button_press(self, message_id: str, custom_id: str, **where: Any) -> dict:
        message = self.messages[message_id]
        return self.interaction(3, {"custom_id": custom_id, "component_type": 2}, channel_id=message["channel_id"],
                                dm=message["channel_id"] == DM_CHANNEL_ID, message=message, **where)


def _option_type(value: Any) -> int:
    """Discord's application command option types: 5 boolean, 4 integer, 3 string."""
    return 5 if isinstance(value, bool) else 4 if isinstance(value, int) else 3
