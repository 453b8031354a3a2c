"""The Slack spec: its tokens are checked before anything connects, `bothub slack-manifest` prints an app that
matches the adapter, and doctor checks the tokens and the scopes against the fake Slack."""

from __future__ import annotations

import argparse
import json

import pytest

from adapters.slack import SPEC, SlackConfig
from adapters.slack.adapter import create, doctor
from adapters.slack.manifest import BOT_SCOPES, SLACK_BUILTINS
from bot.commands import menu
from bot.config import ConfigError
from tests.adapters.contract.driver import services
from tests.adapters.slack.conftest import env
from tests.fakes.slack_api import FakeSlack
from tests.fakes.slack_rules import APP_TOKEN, BOT_TOKEN


@pytest.mark.parametrize(("settings", "given", "error"), [
    (SlackConfig(), {}, "SLACK_BOT_TOKEN must be the app's Bot User OAuth Token"),
    (SlackConfig(), {"SLACK_BOT_TOKEN": APP_TOKEN}, "SLACK_BOT_TOKEN must be"),
    (SlackConfig(), {"SLACK_BOT_TOKEN": BOT_TOKEN}, "Socket Mode needs SLACK_APP_TOKEN"),
    (SlackConfig(mode="events"), {"SLACK_BOT_TOKEN": BOT_TOKEN}, "the Events API needs SLACK_SIGNING_SECRET"),
])
def test_missing_or_swapped_tokens_are_refused_with_where_to_find_them(
        settings: SlackConfig, given: dict[str, str], error: str) -> None:
    with pytest.raises(ConfigError, match=error):
        create(settings, given, services([]))


def manifest_args(**given: object) -> argparse.Namespace:
    return argparse.Namespace(**({"name": "bothub", "events_url": None, "lang": "en", "only_entry": False} | given))


async def test_the_manifest_has_every_command_scope_and_socket_mode(capsys: pytest.CaptureFixture[str]) -> None:
    [printing] = SPEC.commands
    assert printing.name == "slack-manifest"
    assert await printing.run(SlackConfig(), {}, manifest_args(), menu()) == 0
    app = json.loads(capsys.readouterr().out)
    commands = {c["command"] for c in app["features"]["slash_commands"]}
    assert "/bothub" in commands and "/tree" in commands and "/goto" in commands
    assert not {f"/{name}" for name in SLACK_BUILTINS} & commands  # /remind, /status stay /bothub remind …
    assert app["oauth_config"]["scopes"]["bot"] == list(BOT_SCOPES)
    assert app["settings"]["socket_mode_enabled"] is True and "request_url" not in app["settings"]["interactivity"]
    assert "message.im" in app["settings"]["event_subscriptions"]["bot_events"]
    assert len(app["features"]["slash_commands"]) <= 50


async def test_an_events_api_manifest_points_everything_at_the_url(capsys: pytest.CaptureFixture[str]) -> None:
    url = "https://bot.example.org/slack/events"
    assert await SPEC.commands[0].run(SlackConfig(), {}, manifest_args(events_url=url, lang="zh", only_entry=True),
                                      menu()) == 0
    app = json.loads(capsys.readouterr().out)
    assert app["settings"]["socket_mode_enabled"] is False
    assert app["settings"]["event_subscriptions"]["request_url"] == app["settings"]["interactivity"]["request_url"]
    [entry] = app["features"]["slash_commands"]
    assert entry["url"] == url and entry["description"] == "对话、分支与工具的 AI 助手"


async def test_doctor_checks_both_tokens_and_the_scopes(slack: FakeSlack) -> None:
    assert await doctor(SlackConfig(), env(slack)) == "bot @hub in Fake Team (socket mode), scopes ok"
    with pytest.raises(ConfigError, match="invalid_auth"):
        await doctor(SlackConfig(), env(slack, SLACK_APP_TOKEN="xapp-not-ours"))


async def test_doctor_names_the_scopes_the_token_lacks() -> None:
    narrow = FakeSlack(scopes=("chat:write", "im:history"))
    await narrow.start()
    try:
        with pytest.raises(ConfigError, match="lacks scopes app_mentions:read, assistant:write"):
            await doctor(SlackConfig(), env(narrow))
    finally:
        await narrow.stop()


def test_the_spec_says_where_the_credentials_come_from_in_both_languages() -> None:
    en, zh = SPEC.first_steps
    assert "slack-manifest" in en and "slack-manifest" in zh and "xapp-" in zh
    assert set(SPEC.secrets) == {"SLACK_BOT_TOKEN", "SLACK_APP_TOKEN", "SLACK_SIGNING_SECRET"}
