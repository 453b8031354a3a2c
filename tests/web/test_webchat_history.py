"""The web chat's reads over HTTP: each signed-in session sees its own chat's branch and conversations only,
a page at a time, and a message id from another chat reads as nothing at all."""

from __future__ import annotations

import re
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

import aiohttp

from tests.web.conftest import PASSWORD, Dashboard
from tests.web.seed import linear


@asynccontextmanager
async def browser_session(hub: Dashboard) -> AsyncIterator[tuple[aiohttp.ClientSession, str]]:
    """A signed-in client of its own (its own cookies) and its web chat's storage key."""
    async with aiohttp.ClientSession(cookie_jar=aiohttp.CookieJar(unsafe=True)) as http:
        await http.post(hub.url("/login"), data={"password": PASSWORD})
        page = await (await http.get(hub.url("/webchat"))).text()
        yield http, re.search(r'data-chat="([^"]+)"', page).group(1)  # type: ignore[union-attr]


async def history(http: aiohttp.ClientSession, hub: Dashboard, before: str = "") -> dict[str, object]:
    response = await http.get(hub.url("/webchat/history"), params={"before": before} if before else {})
    assert response.status == 200
    return await response.json()  # type: ignore[no-any-return]


async def test_history_is_the_sessions_own_branch_a_page_at_a_time(webchat: Dashboard) -> None:
    async with browser_session(webchat) as (alice, alice_chat), browser_session(webchat) as (bob, bob_chat):
        assert alice_chat != bob_chat and alice_chat.startswith("web:")
        info, messages = await linear(webchat.app.store, alice_chat, [f"line {i}" for i in range(45)])
        latest = await history(alice, webchat)
        shown = latest["messages"]
        assert isinstance(shown, list) and len(shown) == 30 and latest["more"] is True
        assert [m["text"] for m in shown] == [f"line {i}" for i in range(15, 45)]
        assert shown[-1]["number"] == 45 and shown[-1]["role"] == "user" and shown[-1]["at"]
        older = await history(alice, webchat, shown[0]["id"])
        assert [m["text"] for m in older["messages"]] == [f"line {i}" for i in range(15)]  # type: ignore[union-attr]
        assert older["more"] is False
        # another session: its own empty chat, and Alice's ids mean nothing there
        assert await history(bob, webchat) == {"conversation": "", "title": "", "more": False, "messages": []}
        assert (await history(bob, webchat, messages[20].id))["messages"] == []
        assert (await history(alice, webchat, "nosuchid"))["messages"] == []
        listed = await (await alice.get(webchat.url("/webchat/conversations"))).json()
        assert [c["id"] for c in listed["conversations"]] == [info.id]
        assert listed["conversations"][0]["messages"] == 45
        assert (await (await bob.get(webchat.url("/webchat/conversations"))).json()) == {"conversations": []}


async def test_history_needs_the_sign_in(webchat: Dashboard) -> None:
    async with aiohttp.ClientSession() as stranger:
        response = await stranger.get(webchat.url("/webchat/history"), allow_redirects=False)
        assert response.status in (302, 401)
