"""WeCom (企业微信) AI bot (智能机器人): messages by the WebSocket long connection (default, no public URL) or
encrypted HTTP callbacks; answers in WeCom's own stream messages, buttons as template cards."""

from __future__ import annotations

from typing import Literal

from bot.adapter import AdapterSpec, PlatformConfig, imported


class WeComConfig(PlatformConfig):
    transport: Literal["longconn", "callback"] = "longconn"
    ws_url: str | None = None  # env WECOM_WS_URL wins; the long connection's address
    callback_path: str = "/wecom/callback"  # callback mode: the bot's message receiving URL


SPEC = AdapterSpec(
    name="wecom",
    config_model=WeComConfig,
    create=imported("adapters.wecom.adapter", "create"),
    secrets=("WECOM_BOT_SECRET", "WECOM_TOKEN", "WECOM_ENCODING_AES_KEY"),
    required_env=("WECOM_BOT_ID", "WECOM_BOT_SECRET"),
    doctor=imported("adapters.wecom.adapter", "doctor"),
    first_steps=("WeCom: admin console (work.weixin.qq.com) → Security & Management → Management Tools → AI Bot → "
                 "create a bot → API mode: long connection → copy the Bot ID and Secret",
                 "企业微信：管理后台（work.weixin.qq.com）→ 安全与管理 → 管理工具 → 智能机器人 → 创建机器人"
                 " → API 模式选择「长连接」→ 复制 Bot ID 和 Secret"),
)
