"""Two bot accounts of one platform in one `bothub run`, for Discord (two applications: two gateway connections,
two command registrations), Feishu (two apps: two long connections, two tenant tokens), DingTalk and WeCom (two
robots each): the scenario of two_apps.py against each platform's multi-app fake (clouds.py)."""

from __future__ import annotations

import asyncio
import itertools
from pathlib import Path
from typing import Any

import discord
import pytest

from adapters.dingtalk import stream
from adapters.wecom import longconn
from tests.cli.test_cli_forgives import bothub, clean_env
from tests.fakes import clouds
from tests.fakes.cloud import Cloud
from tests.fakes.dingtalk_api import CLIENT_ID, CLIENT_SECRET, FakeDingTalk
from tests.fakes.dingtalk_gateway import ROBOT_TOPIC
from tests.fakes.discord_api import BOT_USER, CHANNEL_ID, TOKEN, FakeDiscord
from tests.fakes.feishu_api import APP_ID, APP_SECRET, FakeFeishu
from tests.fakes.openai_api import FakeOpenAI
from tests.fakes.wecom_rules import BOT_ID, SECRET
from tests.fakes.wecom_ws import FakeWeCom
from tests.fleet.conftest import KEY
from tests.fleet.two_apps import LIVE, TwoApps, two_identities
from tests.harness import running_app

_ids = itertools.count(1)


async def _serve(*fakes: Any) -> None:
    for fake in fakes:
        await fake.start()


async def test_two_discord_applications(tmp_path: Path, fake: FakeOpenAI, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(discord.http.Route, "BASE", discord.http.Route.BASE)  # process-wide in discord.py
    monkeypatch.setattr(discord.gateway.DiscordWebSocket, "DEFAULT_GATEWAY",
                        discord.gateway.DiscordWebSocket.DEFAULT_GATEWAY)
    beta = {**BOT_USER, "id": "900000000000000002", "username": "beta"}
    apps = [FakeDiscord(), FakeDiscord(token="BETA-TOKEN", user=beta)]
    cloud = clouds.discord(apps)
    await _serve(*apps, cloud)
    env = {"BOTHUB_SECRET_KEY": KEY, "DISCORD_BOT_TOKEN": TOKEN, "DISCORD_API_BASE": f"{cloud.base}/api/v10",
           "DISCORD_GATEWAY_URL": f"ws://127.0.0.1:{cloud.port}/gateway"}

    async def say(n: int, text: str) -> None:
        bot = apps[n]
        await bot.dispatch("MESSAGE_CREATE", bot.user_message(f"<@{bot.app_id}> {text}", mentions=(bot.user,)))

    try:
        config = {**LIVE, "discord": {"sync_commands_on_start": True}}  # the default registers its commands
        async with running_app(tmp_path, fake.base_url, ("discord",), env=env, config=config) as app:
            await two_identities(app, fake, TwoApps(
                "discord", CHANNEL_ID, {"DISCORD_BOT_TOKEN": "BETA-TOKEN"}, {"DISCORD_BOT_TOKEN": "NOT-A-BOT"}, say,
                shown=lambda n: [m["content"] for m in apps[n].messages.values() if m["channel_id"] == CHANNEL_ID],
                connects=lambda n: len(apps[n].identifies), online=lambda n: bool(apps[n].connected_shards()),
                settings={"sync_commands_on_start": False}))
        assert None not in apps[1].registered
        code, out, err = await bothub(tmp_path, "discord-sync", "--identity", "beta", env=clean_env(
            BOTHUB_DATA_DIR=str(tmp_path / "data"), BOTHUB_SECRET_KEY=KEY, DISCORD_API_BASE=env["DISCORD_API_BASE"]))
        assert code == 0 and "synced" in out, err  # the second application's commands, registered with its token
    finally:
        await _stop(cloud, *apps)
    assert "/api/v10/users/@me" in cloud.refused  # the wrong token, checked before it was stored
    for bot in apps:  # each application: its own slash commands, its own gateway session
        assert bot.registered[None] and [i["token"] for i in bot.identifies] == [bot.token]


async def test_two_feishu_apps(tmp_path: Path, fake: FakeOpenAI) -> None:
    apps = [FakeFeishu(), FakeFeishu("cli_beta", "beta-secret", "ou_beta", "Beta")]
    cloud = clouds.feishu(apps)
    await _serve(*apps, cloud)
    env = {"BOTHUB_SECRET_KEY": KEY, "FEISHU_APP_ID": APP_ID, "FEISHU_APP_SECRET": APP_SECRET,
           "FEISHU_DOMAIN": cloud.base}
    group = "oc_shared_group"

    async def say(n: int, text: str) -> None:
        bot = apps[n]
        event = bot.incoming(f"ev-{next(_ids)}", text=f"@_user_1 {text}", chat_id=group,
                             mentions=(("@_user_1", bot.open_id, bot.name),))
        await bot.push_ws_event(event)

    try:
        async with running_app(tmp_path, fake.base_url, ("feishu",), env=env, config=LIVE) as app:
            await two_identities(app, fake, TwoApps(
                "feishu", group, {"FEISHU_APP_ID": "cli_beta", "FEISHU_APP_SECRET": "beta-secret"},
                {"FEISHU_APP_ID": "cli_beta", "FEISHU_APP_SECRET": "wrong"}, say,
                shown=lambda n: apps[n].shown(group), connects=lambda n: apps[n].ws_connects,
                online=lambda n: apps[n].ws_connected.is_set()))
    finally:
        await _stop(cloud, *apps)
    assert cloud.refused and all(t.startswith(f"t-{a.app_id}-") for a in apps for t in a.issued_tokens)
    for bot in apps:  # every call each app's fake saw carried a tenant token that app was issued
        assert all(c.headers.get("Authorization", "").startswith(f"Bearer t-{bot.app_id}-")
                   for c in bot.calls if c.path.startswith("/open-apis/im/"))


async def test_two_dingtalk_robots(tmp_path: Path, fake: FakeOpenAI, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(stream.StreamConnection, "pause", staticmethod(_quick))
    apps = [FakeDingTalk(), FakeDingTalk("ding-beta", "ding-beta-secret")]
    cloud = clouds.dingtalk(apps)
    await _serve(*apps, cloud)
    env = {"BOTHUB_SECRET_KEY": KEY, "DINGTALK_CLIENT_ID": CLIENT_ID, "DINGTALK_CLIENT_SECRET": CLIENT_SECRET,
           "DINGTALK_API_BASE": cloud.base, "DINGTALK_OAPI_BASE": cloud.base}
    group = "cid-shared-group"

    async def say(n: int, text: str) -> None:
        data = {"msgId": f"msg-{next(_ids)}", "conversationType": "2", "conversationId": group,
                "senderStaffId": "staff-ann", "senderId": "$:sender-ann", "senderNick": "Ann",
                "createAt": 1764518400000, "isInAtList": True, "msgtype": "text", "text": {"content": text}}
        await apps[n].until_acked(await apps[n].push(ROBOT_TOPIC, apps[n].robot_frame(data)))

    def shown(n: int) -> list[str]:
        return [c.params["msgContent"] for c in apps[n].cards.values()
                if c.chat_id == group and c.params.get("flowStatus") == "3"]

    try:
        async with running_app(tmp_path, fake.base_url, ("dingtalk",), env=env, config=LIVE) as app:
            await two_identities(app, fake, TwoApps(
                "dingtalk", group, {"DINGTALK_CLIENT_ID": "ding-beta", "DINGTALK_CLIENT_SECRET": "ding-beta-secret"},
                {"DINGTALK_CLIENT_ID": "ding-beta", "DINGTALK_CLIENT_SECRET": "wrong"}, say, shown,
                connects=lambda n: apps[n].ws_connects, online=lambda n: apps[n].ws_connected.is_set()))
    finally:
        await _stop(cloud, *apps)
    assert "/v1.0/oauth2/accessToken" in cloud.refused
    for bot in apps:  # each robot's cards went out with its own code and its own access token
        tokens = [{k.lower(): v for k, v in c.headers.items()}.get("x-acs-dingtalk-access-token", "")
                  for c in bot.calls if "/card/" in c.path]
        assert tokens and all(t.startswith(f"at-{bot.client_id}-") for t in tokens)


async def test_two_wecom_bots(tmp_path: Path, fake: FakeOpenAI, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(longconn.LongConnection, "pause", staticmethod(_quick))
    apps = [FakeWeCom(), FakeWeCom("aibot-fake-0002", "beta-aibot-secret")]
    cloud = clouds.wecom(apps)
    await _serve(*apps, cloud)
    env = {"BOTHUB_SECRET_KEY": KEY, "WECOM_BOT_ID": BOT_ID, "WECOM_BOT_SECRET": SECRET, "WECOM_WS_URL": f"ws://127.0.0.1:{cloud.port}/ws"}
    group = "wrkSharedGroup"

    async def say(n: int, text: str) -> None:
        await apps[n].push_message({"msgid": f"msg-{next(_ids)}", "aibotid": apps[n].bot_id, "chattype": "group",
                                    "chatid": group, "from": {"userid": "wangwu"}, "msgtype": "text",
                                    "text": {"content": f"@助手 {text}"}})

    try:
        async with running_app(tmp_path, fake.base_url, ("wecom",), env=env, config=LIVE) as app:
            await two_identities(app, fake, TwoApps(
                "wecom", group, {"WECOM_BOT_ID": "aibot-fake-0002", "WECOM_BOT_SECRET": "beta-aibot-secret"},
                {"WECOM_BOT_ID": "aibot-fake-0002", "WECOM_BOT_SECRET": "wrong"}, say,
                shown=lambda n: [i.text for i in apps[n].items if i.chat == group and not i.open],
                connects=lambda n: apps[n].connects,
                online=lambda n: apps[n].subscribed.is_set()))
    finally:
        await _stop(cloud, *apps)
    for bot in apps:
        assert {c.body["bot_id"] for c in bot.calls_of("aibot_subscribe")} == {bot.bot_id}


async def _quick(_seconds: float) -> None:
    """Reconnect pauses, shortened for tests."""
    await asyncio.sleep(0.01)


async def _stop(cloud: Cloud, *fakes: Any) -> None:
    await cloud.stop()
    for fake in fakes:
        await fake.stop()

