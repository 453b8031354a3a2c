"""Telegram: python-telegram-bot against the Bot API, by long polling or a webhook on the hub's server."""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING

from bot.adapter import AdapterServices, AdapterSpec, PlatformConfig

if TYPE_CHECKING:
    from adapters.telegram.adapter import TelegramAdapter


class TelegramConfig(PlatformConfig):
    api_base: str | None = None  # env TELEGRAM_API_BASE wins
    webhook_url: str | None = None  # set: updates arrive on the hub's server instead of long polling
    webhook_path: str = "/telegram/webhook"


def _create(section: TelegramConfig, env: Mapping[str, str], services: AdapterServices) -> TelegramAdapter:
    from adapters.telegram.adapter import create  # the SDK is imported only when the platform runs

    return create(section, env, services)


async def _doctor(section: TelegramConfig, env: Mapping[str, str]) -> str:
    from adapters.telegram.adapter import doctor

    return await doctor(section, env)


SPEC = AdapterSpec(
    name="telegram",
    config_model=TelegramConfig,
    create=_create,
    secrets=("TELEGRAM_BOT_TOKEN", "TELEGRAM_WEBHOOK_SECRET"),
    required_env=("TELEGRAM_BOT_TOKEN",),
    doctor=_doctor,
    loggers=("telegram",),
)
