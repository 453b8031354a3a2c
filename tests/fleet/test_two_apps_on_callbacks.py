"""Two accounts of one platform on pushed events (Feishu webhooks, DingTalk HTTP callbacks, WeCom encrypted
callbacks): the default one at its configured path, the second under `/bots/beta/…`, each checking what arrives
with its own keys (one signed for the other is refused at either path), each answering with its own agent, and
the second's path gone once it is disabled."""

from __future__ import annotations

import asyncio
import base64
import hashlib
import hmac
import itertools
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import aiohttp

from bot.app import App
from bot.fleet.model import Identity
from tests.fakes import clouds
from tests.fakes.dingtalk_api import CLIENT_ID, CLIENT_SECRET, FakeDingTalk
from tests.fakes.feishu_api import APP_ID, APP_SECRET, FakeFeishu
from tests.fakes.feishu_events import signed_request
from tests.fakes.openai_api import FakeOpenAI
from tests.fakes.wecom_callback import ENCODING_AES_KEY, TOKEN, FakeWeComCallbacks
from tests.fleet.conftest import KEY
from tests.fleet.two_apps import LIVE, switch, two_agents
from tests.harness import running_app, wait_for

_ids = itertools.count(1)
Post = Callable[[int, str], Awaitable[int]]  # app 0 or 1 pushes a user's message to a path: the HTTP status


async def two_hooks(app: App, llm: FakeOpenAI, beta: Identity, path: str, post: Post,
                    shown: Callable[[int], list[str]]) -> None:
    await two_agents(app, llm, beta.platform)
    await switch(app, beta, True)
    paths = (path, f"/bots/{beta.name}{path}")
    assert await post(1, paths[0]) in (401, 403) and await post(0, paths[1]) in (401, 403)  # the other's keys
    assert await post(0, paths[0]) == 200 and await post(1, paths[1]) == 200
    await wait_for(lambda: bool(shown(0) and shown(1)), within=15)
    assert shown(0) == ["[coder-model] ok"] and shown(1) == ["[helper-model] ok"]
    await switch(app, beta, False)
    assert await post(1, paths[1]) == 404 and await post(0, paths[0]) == 200


async def test_two_feishu_apps_on_webhooks(tmp_path: Path, fake: FakeOpenAI) -> None:
    apps = [FakeFeishu(), FakeFeishu("cli_beta", "beta-secret", "ou_beta", "Beta")]
    keys = ("first-key", "beta-key")
    env = {"BOTHUB_SECRET_KEY": KEY, "FEISHU_APP_ID": APP_ID, "FEISHU_APP_SECRET": APP_SECRET,
           "FEISHU_ENCRYPT_KEY": keys[0]}
    beta = Identity(name="beta", platform="feishu", settings={"transport": "webhook"}, credentials={
        "FEISHU_APP_ID": "cli_beta", "FEISHU_APP_SECRET": "beta-secret", "FEISHU_ENCRYPT_KEY": keys[1]})

    async def run(app: App, http: aiohttp.ClientSession) -> None:
        async def post(n: int, path: str) -> int:
            event = apps[n].incoming(f"wh-{next(_ids)}", text="hi", chat_type="p2p", chat_id="oc_dm")
            body, headers = signed_request(keys[n], event)
            async with http.post(f"http://127.0.0.1:{app.web_port}{path}", data=body, headers=headers) as answer:
                return answer.status

        await two_hooks(app, fake, beta, "/feishu/webhook", post, lambda n: apps[n].shown("oc_dm")[:1])

    await _hosted(tmp_path, fake, clouds.feishu(apps), apps, env, "feishu", "FEISHU_DOMAIN", {"transport": "webhook"},
                  run)


async def test_two_dingtalk_robots_on_http_callbacks(tmp_path: Path, fake: FakeOpenAI) -> None:
    apps = [FakeDingTalk(), FakeDingTalk("ding-beta", "ding-beta-secret")]
    env = {"BOTHUB_SECRET_KEY": KEY, "DINGTALK_CLIENT_ID": CLIENT_ID, "DINGTALK_CLIENT_SECRET": CLIENT_SECRET}
    beta = Identity(name="beta", platform="dingtalk", settings={"transport": "http"}, credentials={
        "DINGTALK_CLIENT_ID": "ding-beta", "DINGTALK_CLIENT_SECRET": "ding-beta-secret"})

    async def run(app: App, http: aiohttp.ClientSession) -> None:
        async def post(n: int, path: str) -> int:
            stamp = str(int(time.time() * 1000))
            secret = apps[n].client_secret.encode()  # DingTalk signs "{timestamp}\n{secret}" with the app secret
            sign = base64.b64encode(hmac.new(secret, stamp.encode() + b"\n" + secret, hashlib.sha256).digest())
            data = apps[n].robot_frame({
                "msgId": f"msg-{next(_ids)}", "conversationType": "2", "conversationId": "cid-group",
                "senderStaffId": "staff-ann", "senderNick": "Ann", "isInAtList": True, "msgtype": "text",
                "text": {"content": "hi"}})
            async with http.post(f"http://127.0.0.1:{app.web_port}{path}", json=data,
                                 headers={"timestamp": stamp, "sign": sign.decode()}) as answer:
                return answer.status

        await two_hooks(app, fake, beta, "/dingtalk/callback", post, lambda n: [
            c.params["msgContent"] for c in apps[n].cards.values() if c.params.get("flowStatus") == "3"][:1])

    await _hosted(tmp_path, fake, clouds.dingtalk(apps), apps, env, "dingtalk", "DINGTALK_API_BASE",
                  {"transport": "http"}, run)


async def test_two_wecom_bots_on_encrypted_callbacks(tmp_path: Path, fake: FakeOpenAI) -> None:
    other_key = base64.b64encode(bytes(range(101, 133))).decode().rstrip("=")
    sides = [FakeWeComCallbacks("", TOKEN, ENCODING_AES_KEY), FakeWeComCallbacks("", "betaToken", other_key)]
    env = {"BOTHUB_SECRET_KEY": KEY, "WECOM_TOKEN": TOKEN, "WECOM_ENCODING_AES_KEY": ENCODING_AES_KEY}
    beta = Identity(name="beta", platform="wecom", settings={"transport": "callback"}, credentials={
        "WECOM_TOKEN": "betaToken", "WECOM_ENCODING_AES_KEY": other_key})
    finished: list[list[str]] = [[], []]
    polls: list[asyncio.Task[None]] = []

    async def poll(n: int, first: dict[str, Any], msgid: str) -> None:
        finished[n].append(await sides[n].poll(first, msgid))

    async def run(app: App, _http: aiohttp.ClientSession) -> None:
        async def post(n: int, path: str) -> int:
            sides[n].bot_url = f"http://127.0.0.1:{app.web_port}{path}"
            msgid = f"msg-{next(_ids)}"
            status, first = await sides[n].post({
                "msgid": msgid, "aibotid": f"bot-{n}", "chattype": "single", "from": {"userid": "wangwu"},
                "msgtype": "text", "text": {"content": "hi"}, "response_url": sides[n].response_url()})
            if status == 200 and first is not None:  # WeCom refreshes the stream until it is finished
                polls.append(asyncio.create_task(poll(n, first, msgid)))
            return status

        await two_hooks(app, fake, beta, "/wecom/callback", post, lambda n: finished[n][:1])
        await asyncio.gather(*polls)

    for side in sides:
        await side.start()
    try:
        config = {**LIVE, "server": {"port": 0}, "wecom": {"transport": "callback"}}
        async with running_app(tmp_path, fake.base_url, ("wecom",), env=env, config=config) as app, \
                aiohttp.ClientSession() as http:
            await run(app, http)
    finally:
        for side in sides:
            await side.stop()
    assert finished == [["[coder-model] ok"] * 2, ["[helper-model] ok"]]  # the default answered again at the end


async def _hosted(tmp_path: Path, fake: FakeOpenAI, cloud: Any, apps: list[Any], env: dict[str, str], platform: str,
                  base_env: str, section: dict[str, str],
                  run: Callable[[App, aiohttp.ClientSession], Awaitable[None]]) -> None:
    """The apps' fakes behind one cloud (its address in `base_env`), the hub running the platform's section."""
    for server in (*apps, cloud):
        await server.start()
    try:
        config = {**LIVE, "server": {"port": 0}, platform: section}
        async with running_app(tmp_path, fake.base_url, (platform,), env={**env, base_env: cloud.base},
                               config=config) as app, aiohttp.ClientSession() as http:
            await run(app, http)
    finally:
        await cloud.stop()
        for server in apps:
            await server.stop()
