"""Feishu / Lark: events by long connection (default) or webhook, answers as cards (streaming cards when long)."""

from __future__ import annotations

from typing import Literal

from bot.adapter import AdapterSpec, PlatformConfig, imported


class FeishuConfig(PlatformConfig):
    domain: str | None = None  # env FEISHU_DOMAIN wins: "feishu", "lark" or a URL
    transport: Literal["websocket", "webhook"] = "websocket"
    webhook_path: str = "/feishu/webhook"


SPEC = AdapterSpec(
    name="feishu",
    config_model=FeishuConfig,
    create=imported("adapters.feishu.adapter", "create"),  # imported only when the platform runs
    secrets=("FEISHU_APP_SECRET", "FEISHU_ENCRYPT_KEY", "FEISHU_VERIFICATION_TOKEN"),
    required_env=("FEISHU_APP_ID", "FEISHU_APP_SECRET"),
    doctor=imported("adapters.feishu.adapter", "doctor"),
    first_steps=("Feishu: open.feishu.cn → create an app → Credentials: App ID and App Secret "
                 "(events by long connection)",
                 "飞书：open.feishu.cn → 创建应用 → 凭证与基础信息：App ID 和 App Secret（事件用长连接）"),
)
