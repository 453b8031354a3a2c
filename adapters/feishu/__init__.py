"""Feishu / Lark: events by long connection (default) or webhook, answers as streaming cards."""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Literal

from bot.adapter import AdapterServices, AdapterSpec, PlatformConfig

if TYPE_CHECKING:
    from adapters.feishu.adapter import FeishuAdapter


class FeishuConfig(PlatformConfig):
    domain: str | None = None  # env FEISHU_DOMAIN wins: "feishu", "lark" or a URL
    transport: Literal["websocket", "webhook"] = "websocket"
    webhook_path: str = "/feishu/webhook"


def _create(section: FeishuConfig, env: Mapping[str, str], services: AdapterServices) -> FeishuAdapter:
    from adapters.feishu.adapter import create  # lark-oapi takes seconds to import: only when it runs

    return create(section, env, services)


async def _doctor(section: FeishuConfig, env: Mapping[str, str]) -> str:
    from adapters.feishu.adapter import doctor

    return await doctor(section, env)


SPEC = AdapterSpec(
    name="feishu",
    config_model=FeishuConfig,
    create=_create,
    secrets=("FEISHU_APP_SECRET", "FEISHU_ENCRYPT_KEY", "FEISHU_VERIFICATION_TOKEN"),
    required_env=("FEISHU_APP_ID", "FEISHU_APP_SECRET"),
    doctor=_doctor,
    loggers=("Lark",),
)
