"""Telegram: python-telegram-bot against the Bot API, by long polling or a webhook on the hub's server."""

from __future__ import annotations

from pydantic import Field

from bot.adapter import AdapterSpec, PlatformConfig, imported


class TelegramConfig(PlatformConfig):
    api_base: str | None = None  # env TELEGRAM_API_BASE wins
    webhook_url: str | None = None  # set: updates arrive on the hub's server instead of long polling
    webhook_path: str = "/telegram/webhook"
    # sends and edits per second over all chats: Telegram's ~30; more only for a bot whose limit Telegram raised
    messages_per_second: int = Field(default=30, ge=1, le=1000)


# python-telegram-bot imports these when installed, for what bothub never does: `cryptography` to decrypt Telegram
# Passport data (≈ 9 MB resident), and `click` (with `pygments`) through httpx's command-line entry point. Both
# are guarded by `except ImportError`; hidden while the adapter is first imported, they stay unloaded
# (cryptography is installed for Feishu's encrypted webhooks, which import it on their first event).
UNUSED_EXTRAS = ("cryptography", "click")

SPEC = AdapterSpec(
    name="telegram",
    config_model=TelegramConfig,
    create=imported("adapters.telegram.adapter", "create", hide=UNUSED_EXTRAS),  # the SDK loads only when it runs
    secrets=("TELEGRAM_BOT_TOKEN", "TELEGRAM_WEBHOOK_SECRET"),
    required_env=("TELEGRAM_BOT_TOKEN",),
    doctor=imported("adapters.telegram.adapter", "doctor", hide=UNUSED_EXTRAS),
    loggers=("telegram",),
    first_steps=("Telegram: in Telegram, @BotFather → /newbot → copy the token",
                 "Telegram：在 Telegram 中找 @BotFather → /newbot → 复制令牌"),
)
