"""Secrets never reach logs: known secret values and token-shaped strings are masked, tracebacks included."""

from __future__ import annotations

import io
import logging

from bot.ops.redact import MASK, install, redact

TELEGRAM = "123456789:" + "AAHdqTcvCH1vGWJxfSeofSAs0K5PALDsaw"
DISCORD = "MTA0NjQ2NzA0MjEyMzQ1Njc4OQ" + ".GhXyZw." + "not-a-real-secret-just-a-test-value"
ENV = {
    "OPENAI_API_KEY": "plain-key-without-a-prefix-42",
    "TELEGRAM_BOT_TOKEN": TELEGRAM,
    "DISCORD_BOT_TOKEN": "MTA0NjQ2.GhXyZw.discord-secret-part",
    "FEISHU_APP_SECRET": "feishu-app-secret-value",
    "FEISHU_ENCRYPT_KEY": "feishu-encrypt-key-value",
    "FEISHU_VERIFICATION_TOKEN": "feishu-verification-value",
    "TELEGRAM_WEBHOOK_SECRET": "webhook-secret-value",
    "HOME": "/home/someone",
}


def test_token_shapes_are_masked_without_knowing_the_values() -> None:
    cases = {
        "GET https://api.telegram.org/bot987654:ABCdef_ghi-JKLmno/sendMessage": "/bot987654:***/sendMessage",
        "Authorization: Bearer abc.DEF-123_456": "Authorization: Bearer ***",
        "headers {'Authorization': 'Bot " + DISCORD + "'}": "'Authorization': 'Bot ***'",
        "key sk-proj-AbCdEf0123456789 rejected": "key sk-*** rejected",
    }
    for raw, expected in cases.items():
        assert expected in redact(raw), raw
    for ordinary in ("skip ten bots", "the bot responded quickly", "Bearer of bad news", "sk-short", "v1.2.3"):
        assert redact(ordinary) == ordinary


def test_filter_masks_every_secret_in_messages_args_and_tracebacks() -> None:
    out = io.StringIO()
    logger = logging.getLogger("bothub.test-redact")
    logger.propagate = False
    handler = logging.StreamHandler(out)
    logger.addHandler(handler)
    try:
        install(ENV, logger)
        install(ENV, logger)  # idempotent: one filter per handler
        assert len(handler.filters) == 1
        for name, value in ENV.items():
            if name != "HOME":
                logger.warning("%s is %s", name, value)
        try:
            raise RuntimeError(f"401 for key {ENV['OPENAI_API_KEY']}")
        except RuntimeError:
            logger.exception("call failed")
        logger.warning("home is %s", ENV["HOME"])
    finally:
        logger.removeHandler(handler)
    text = out.getvalue()
    for name, value in ENV.items():
        if name != "HOME":
            assert value not in text and f"{name} is {MASK}" in text
    assert "RuntimeError: 401 for key ***" in text
    assert "home is /home/someone" in text  # only secrets are touched
