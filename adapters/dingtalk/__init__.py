"""DingTalk (钉钉): robot messages by Stream mode (default, no public URL) or signed HTTP callbacks; answers as
AI cards streamed in place."""

from __future__ import annotations

from typing import Literal

from bot.adapter import AdapterSpec, PlatformConfig, imported


class DingTalkConfig(PlatformConfig):
    transport: Literal["stream", "http"] = "stream"
    callback_path: str = "/dingtalk/callback"  # http mode: the robot's message receiving URL
    api_base: str | None = None  # env DINGTALK_API_BASE wins; the OpenAPI (and the Stream gateway) origin
    oapi_base: str | None = None  # env DINGTALK_OAPI_BASE wins; the older API origin (media upload)
    card_template: str = "382e4302-551d-4880-bf29-a30acfab2e71.schema"  # DingTalk's public AI Markdown card


SPEC = AdapterSpec(
    name="dingtalk",
    config_model=DingTalkConfig,
    create=imported("adapters.dingtalk.adapter", "create"),  # dingtalk-stream is imported only when it runs
    secrets=("DINGTALK_CLIENT_SECRET",),
    required_env=("DINGTALK_CLIENT_ID", "DINGTALK_CLIENT_SECRET"),
    doctor=imported("adapters.dingtalk.adapter", "doctor"),
    loggers=("dingtalk_stream",),
    first_steps=("DingTalk: open-dev.dingtalk.com → create an app → add the Robot capability (message receiving: "
                 "Stream mode) → Credentials: Client ID and Client Secret",
                 "钉钉：open-dev.dingtalk.com → 创建应用 → 添加机器人能力（消息接收模式：Stream 模式）"
                 " → 凭证与基础信息：Client ID 和 Client Secret"),
)
