"""The local terminal chat: no credentials, no access rules (whoever has the terminal owns the bot)."""

from __future__ import annotations

from collections.abc import Mapping

from adapters.console.adapter import ConsoleAdapter, create
from bot.adapter import AccessConfig, AdapterServices, AdapterSpec, PlatformConfig


class ConsoleConfig(PlatformConfig):
    access: AccessConfig | None = None


def _create(section: ConsoleConfig, env: Mapping[str, str], services: AdapterServices) -> ConsoleAdapter:
    return create(env, services)


SPEC = AdapterSpec(name="console", config_model=ConsoleConfig, create=_create)
