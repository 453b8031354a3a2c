"""Replies reach the replica that waits for them: two apps on one PostgreSQL, each with the HTTP API and the web
chat on its own web server. A request or a web-chat message sent to the replica that does not own the chat is
answered in full there (streamed too; a reply too big for a NOTIFY too), by the owner, through the relay. A
second console on a chat already open in another one is told so and starts nothing."""

from __future__ import annotations

import asyncio
import contextlib
import io
import itertools
import statistics
import time
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import aiohttp
import pytest

from adapters.api.inbound import chat_id
from adapters.console.adapter import ConsoleAdapter
from bot.adapter import TokenHolder
from bot.app import App
from bot.chats.api_tokens import ApiTokens
from bot.i18n import t
from tests.adapters.api.conftest import sse_events
from tests.fakes.openai_api import FakeOpenAI, Text
from tests.harness import running_app
from tests.postgres import PostgresServer
from tests.replicas.cluster import settled

pytestmark = pytest.mark.timeout(120)
PASSWORD = "replicas dashboard password"


@contextlib.asynccontextmanager
async def two_replicas(tmp_path: Path, fake: FakeOpenAI, postgres: PostgresServer) -> AsyncIterator[list[App]]:
    env = {"BOTHUB_DATABASE_URL": await postgres.new_database(), "BOTHUB_ADMIN_PASSWORD": PASSWORD}
    config = {"server": {"enabled": True, "port": 0}, "api": {"burst": 100}}
    async with contextlib.AsyncExitStack() as stack:
        apps = []
        for name in "ab":
            (tmp_path / name).mkdir()
            apps.append(await stack.enter_async_context(running_app(
                tmp_path / name, fake.base_url, ("api", "web"), config=config,
                env={**env, "BOTHUB_REPLICA_ID": name})))
        await settled(*(app.store.claims for app in apps))
        yield apps


async def token(app: App) -> tuple[TokenHolder, str]:
    made, secret = await ApiTokens(app.store.api_tokens, app.store.dashboard).create("tests", "tests")
    return TokenHolder(made.id, made.name, ""), secret


def key_owned_by(app: App, holder: TokenHolder, skip: int = 0) -> str:
    """A conversation key whose chat the replica owns."""
    owned = (f"k{i}" for i in range(10_000) if app.store.claims.holds(f"api:{chat_id(holder, f'k{i}')}"))
    return next(itertools.islice(owned, skip, None))


def url(app: App, path: str) -> str:
    return f"http://127.0.0.1:{app.web_port}{path}"


async def ask(http: aiohttp.ClientSession, app: App, key: str, secret: str, text: str) -> dict[str, Any]:
    async with http.post(url(app, f"/api/v1/chat/{key}/messages"), json={"text": text},
                         headers={"Authorization": f"Bearer {secret}"}) as resp:
        assert resp.status == 200, await resp.text()
        body: dict[str, Any] = await resp.json()
        return body


async def test_an_api_request_to_the_replica_that_does_not_own_the_chat_is_answered_in_full(
        tmp_path: Path, fake: FakeOpenAI, postgres: PostgresServer) -> None:
    async with two_replicas(tmp_path, fake, postgres) as (a, b), aiohttp.ClientSession() as http:
        holder, secret = await token(a)
        key = key_owned_by(a, holder)
        body = await ask(http, b, key, secret, "hello from the other side")
        assert body["complete"] is True and body["text"] == "hello from the other side"
        assert [r["text"] for r in body["replies"]] == ["hello from the other side"]

        big = " ".join(f"word{i}" for i in range(3000))  # ~26 KB: the reply's body waits in relay_events
        fake.script(Text(big))
        body = await ask(http, b, key, secret, "a long one")
        assert body["complete"] is True and body["text"] == big

        timings: dict[str, list[float]] = {"owner": [], "other": []}
        for i in range(10):  # the echo answers at once: what is measured is the hub and the relay
            for where, app in (("owner", a), ("other", b)):
                started = time.monotonic()
                assert (await ask(http, app, key, secret, f"ping {i}"))["text"] == f"ping {i}"
                timings[where].append(time.monotonic() - started)
        owner, other = (statistics.median(timings[w]) * 1000 for w in ("owner", "other"))
        print(f"\nAPI request answered: at the owner {owner:.1f} ms, through the other replica {other:.1f} ms "
              f"(median of 10; routed across replicas adds {other - owner:.1f} ms)")


async def test_a_streamed_api_request_to_the_non_owner_streams_every_step(
        tmp_path: Path, fake: FakeOpenAI, postgres: PostgresServer) -> None:
    async with two_replicas(tmp_path, fake, postgres) as (a, b), aiohttp.ClientSession() as http:
        holder, secret = await token(a)
        key = key_owned_by(b, holder)  # this time b owns the chat and a receives the request
        fake.script(Text("one two three four five six", chunks=6, delay=0.25))
        async with http.post(url(a, f"/api/v1/chat/{key}/messages"), json={"text": "count"},
                             headers={"Authorization": f"Bearer {secret}", "Accept": "text/event-stream"}) as resp:
            assert resp.status == 200 and resp.content_type == "text/event-stream"
            events = [e async for e in sse_events(resp)]
        names = [name for name, _ in events]
        assert names[-1] == "done" and names.count("reply") >= 2  # the answer grew in several steps
        texts = [str(data["text"]) for name, data in events if name == "reply"]
        assert all(later.startswith(earlier.rstrip()) for earlier, later in itertools.pairwise(texts))
        assert texts[-1] == "one two three four five six"
        assert events[-1][1]["complete"] is True and events[-1][1]["text"] == "one two three four five six"


async def signed_in_web_chat(http: aiohttp.ClientSession, receiver: App, owner: App) -> tuple[str, str]:
    """Sign in on `receiver` until the browser session's web chat is one `owner` owns: (chat id, CSRF token)."""
    for _ in range(100):
        http.cookie_jar.clear()
        async with http.post(url(receiver, "/login"), data={"password": PASSWORD}) as signed:
            assert signed.status == 200
        async with http.get(url(receiver, "/webchat")) as page:
            html = await page.text()
        chat = html.split('data-chat="')[1].split('"')[0]
        if owner.store.claims.holds(chat):
            return chat, html.split('name="csrf-token" content="')[1].split('"')[0]
    raise AssertionError("no web chat session landed in the owner's partitions")


async def test_a_web_chat_message_to_the_non_owner_is_answered_in_its_tab(
        tmp_path: Path, fake: FakeOpenAI, postgres: PostgresServer) -> None:
    async with two_replicas(tmp_path, fake, postgres) as (a, b), \
            aiohttp.ClientSession(cookie_jar=aiohttp.CookieJar(unsafe=True)) as http:
        chat, csrf = await signed_in_web_chat(http, b, a)
        assert not b.store.claims.holds(chat)
        fake.script(Text("streamed to the tab over there", chunks=5, delay=0.25))
        async with http.get(url(b, "/webchat/events")) as stream:
            async with http.post(url(b, "/webchat/send"), json={"text": "hi"}, headers={"X-CSRF-Token": csrf}) as sent:
                assert sent.status == 202
            seen: list[dict[str, Any]] = []
            async with asyncio.timeout(30):
                async for name, data in sse_events(stream):
                    if name == "message":
                        seen.append(data)
                        if data["final"]:
                            break
        assert len(seen) >= 2 and not seen[0]["final"]  # streamed: it grew in the tab
        assert seen[-1]["html"] == "<p>streamed to the tab over there</p>\n"
        assert len({m["id"] for m in seen}) == 1  # one bubble, edited in place


async def test_a_second_console_on_a_chat_open_elsewhere_is_told_so(
        tmp_path: Path, fake: FakeOpenAI, postgres: PostgresServer) -> None:
    async with two_replicas(tmp_path, fake, postgres) as (a, b):
        first = ConsoleAdapter("shared", io.StringIO(""), io.StringIO(), share=a.partitions.share)
        assert await first._only_one()
        out = io.StringIO()
        second = ConsoleAdapter("shared", io.StringIO("hello\n"), out, share=b.partitions.share, language="zh")

        async def refuse(_msg: object) -> None:
            raise AssertionError("the second console sent a line")

        await second.start(refuse)
        await asyncio.wait_for(second.wait_closed(), 5)
        assert out.getvalue() == t("zh", "console_open_elsewhere", chat="shared") + "\n"
        other = ConsoleAdapter("another", io.StringIO(""), io.StringIO(), share=b.partitions.share)
        assert await other._only_one()  # another chat opens where it likes
