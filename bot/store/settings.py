"""Typed per-chat settings: what a chat chose with /lang, /model and friends. None means "the default"."""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Protocol


@dataclass(frozen=True, slots=True)
class ChatSettings:
    language: str | None = None
    model: str | None = None
    timezone: str | None = None  # IANA name for /remind, /every and /jobs
    voice: str | None = None  # /voice: "off", "auto" (a voice note is answered with voice) or "on"
    thinking: str | None = None  # /think: "on" shows the model's reasoning folded, "off" hides it

    def stored(self) -> dict[str, str]:
        """The chosen values only, as the backends keep them (one JSON object per chat)."""
        return {k: v for k, v in dataclasses.asdict(self).items() if v is not None}

    @classmethod
    def from_stored(cls, values: Mapping[str, Any]) -> ChatSettings:
        """Keys this version does not know (written by a newer one) are ignored, not an error."""
        known = {f.name for f in dataclasses.fields(cls)}
        return cls(**{k: v for k, v in values.items() if k in known})


class SettingsStore(Protocol):
    async def get(self, chat: str) -> ChatSettings: ...

    async def update(self, chat: str, **values: str | None) -> ChatSettings:
        """Set the given fields (None resets one to its default) in one transaction, so concurrent updates
        of different fields never lose one another; returns the settings now stored. TypeError for a name
        that is not a field."""
        ...


def check_fields(values: Mapping[str, object]) -> None:
    known = {f.name for f in dataclasses.fields(ChatSettings)}
    unknown = sorted(set(values) - known)
    if unknown:
        raise TypeError(f"unknown chat settings: {', '.join(unknown)}")
