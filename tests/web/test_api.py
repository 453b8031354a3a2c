"""The JSON API: what the pages show, as JSON; every route documented in docs/openapi.yaml."""

from __future__ import annotations

import asyncio
import re

import aiohttp
import pytest
import yaml

from bot.chats.sessions import Session
from bot.web import actions
from bot.web.dashboard import chat_key
from tests.web.browser import REPO
from tests.web.conftest import PASSWORD, Dashboard
from tests.web.seed import linear


async def signed_in(http: aiohttp.ClientSession, dashboard: Dashboard) -> str:
    """Sign in; returns the session's CSRF token."""
    page = await (await http.post(dashboard.url("/login"), data={"password": PASSWORD})).text()
    return re.search(r'name="csrf-token" content="([^"]+)"', page).group(1)  # type: ignore[union-attr]


async def test_reads_and_branch_through_the_api(dashboard: Dashboard, http: aiohttp.ClientSession) -> None:
    info, msgs = await linear(dashboard.app.store, "telegram:5", ["hello 你好", "hi", "more", "sure"])
    csrf = await signed_in(http, dashboard)
    chats = await (await http.get(dashboard.url("/api/v1/chats"))).json()
    assert [(c["key"], c["platform"], c["messages"]) for c in chats["chats"]] == [("telegram:5", "telegram", 4)]
    convs = await (await http.get(dashboard.url("/api/v1/conversations?chat=telegram:5"))).json()
    assert [c["id"] for c in convs["conversations"]] == [info.id]
    tree = await (await http.get(dashboard.url(f"/api/v1/tree?chat=telegram:5&conv={info.id}"))).json()
    assert [(n["number"], n["role"], n["cursor"]) for n in tree["nodes"]] == [
        (1, "user", False), (2, "assistant", False), (3, "user", False), (4, "assistant", True)]
    path = f"/api/v1/message?chat=telegram:5&conv={info.id}&node={msgs[1].id}"
    one = await (await http.get(dashboard.url(path))).json()
    assert one["message"]["content"] == "hi" and [m["content"] for m in one["path"]] == ["hello 你好", "hi"]
    hits = await (await http.get(dashboard.url("/api/v1/search?q=你好"))).json()
    assert hits["hits"][0]["snippet"] == [{"text": "hello ", "match": False}, {"text": "你好", "match": True}]

    body = {"chat": "telegram:5", "conv": info.id, "node": msgs[1].id}
    moved = await http.post(dashboard.url("/api/v1/branch"), json=body, headers={"X-CSRF-Token": csrf})
    assert moved.status == 200 and await moved.json() == {"status": "moved"}
    now = await dashboard.app.store.conversations.get("telegram:5", info.id)
    assert now is not None and now.current_message_id == msgs[1].id
    elsewhere = await http.post(dashboard.url("/api/v1/branch"), json={**body, "chat": "telegram:6"},
                                headers={"X-CSRF-Token": csrf})
    assert elsewhere.status == 404  # the conversation is another chat's
    bad = await http.post(dashboard.url("/api/v1/branch"), data="nope", headers={"X-CSRF-Token": csrf})
    assert bad.status == 400


async def test_archived_conversations_are_listed_and_marked(dashboard: Dashboard, http: aiohttp.ClientSession) -> None:
    kept, _ = await linear(dashboard.app.store, "telegram:5", ["kept", "ok"])
    shelved, _ = await linear(dashboard.app.store, "telegram:5", ["shelved", "ok"])
    await dashboard.app.store.housekeeping.set_archived("telegram:5", shelved.id, True)
    await signed_in(http, dashboard)
    convs = await (await http.get(dashboard.url("/api/v1/conversations?chat=telegram:5"))).json()
    assert {c["id"]: c["archived"] for c in convs["conversations"]} == {kept.id: False, shelved.id: True}
    page = await (await http.get(dashboard.url("/chats/view?chat=telegram:5"))).text()
    rows = {row_id: row for row_id, row in re.findall(r'conv=(\w+)">\1</a>(.*?)</td>', page)}
    assert '<span class="tag">archived</span>' in rows[shelved.id]
    assert "archived" not in rows[kept.id]


def test_every_api_route_is_documented(api_routes: list[tuple[str, str]]) -> None:
    spec = yaml.safe_load((REPO / "docs" / "openapi.yaml").read_text(encoding="utf-8"))
    documented = {(method.upper(), path) for path, ops in spec["paths"].items() for method in ops}
    assert set(api_routes) == documented


async def test_a_branch_behind_a_running_answer_is_queued_then_done_in_order(
        dashboard: Dashboard, http: aiohttp.ClientSession, monkeypatch: pytest.MonkeyPatch) -> None:
    """The move never races the answer: 202 "queued" while the chat's lane is busy, made once the answer ends."""
    monkeypatch.setattr(actions, "QUEUE_WAIT", 0.2)
    info, msgs = await linear(dashboard.app.store, "telegram:5", ["hello", "hi", "more", "sure"])
    csrf = await signed_in(http, dashboard)
    answering, answered = asyncio.Event(), asyncio.Event()

    async def answer(_session: Session) -> None:
        answering.set()
        await answered.wait()

    dashboard.app.lanes.run(chat_key("telegram:5"), answer)
    await asyncio.wait_for(answering.wait(), 5)
    body = {"chat": "telegram:5", "conv": info.id, "node": msgs[1].id}
    queued = await http.post(dashboard.url("/api/v1/branch"), json=body, headers={"X-CSRF-Token": csrf})
    assert queued.status == 202 and await queued.json() == {"status": "queued"}
    store = dashboard.app.store

    async def cursor() -> str | None:
        conv = await store.conversations.get("telegram:5", info.id)
        return conv.current_message_id if conv is not None else None

    assert await cursor() == msgs[3].id  # not moved while the answer runs
    answered.set()
    for _ in range(100):
        if await cursor() == msgs[1].id:
            break
        await asyncio.sleep(0.02)
    assert await cursor() == msgs[1].id
    assert [(a.action, a.detail) for a in await store.dashboard.list_audit()] == [("branch-queued", msgs[1].id)]
