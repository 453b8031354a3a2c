"""The dashboard's chat pages and tree fragments asked about what is not there, or is another chat's: each is a
plain 404 saying what was not found (another chat's message looks exactly like a made-up one), and a branch
request for such a message moves no cursor and writes no audit line."""

from __future__ import annotations

import aiohttp

from tests.web.conftest import Dashboard
from tests.web.seed import linear
from tests.web.test_api import signed_in


async def test_pages_and_fragments_about_what_is_not_there_are_not_found(
        dashboard: Dashboard, http: aiohttp.ClientSession) -> None:
    store = dashboard.app.store
    info, mine = await linear(store, "telegram:5", ["hello", "hi", "more", "sure"])
    other, theirs = await linear(store, "telegram:6", ["elsewhere", "yes"])
    await signed_in(http, dashboard)
    conv = f"chat=telegram:5&conv={info.id}"
    found = ("/chats/view?chat=telegram:5", f"/tree?{conv}&node={mine[1].id}", f"/tree/node?{conv}&node={mine[1].id}",
             f"/tree/subtree?{conv}&head={mine[1].id}", f"/tree/export?{conv}")
    for path in found:  # what the refusals below are told apart from
        async with http.get(dashboard.url(path)) as response:
            assert response.status == 200, path
    missing = {
        "/chats/view?chat=telegram:404": "no such chat",
        f"/tree?{conv}&node=nosuch": "no such message in this conversation",
        f"/tree/node?{conv}&node={theirs[0].id}": "no such message in this conversation",
        f"/tree/gap?{conv}&at=nosuch&count=3": "no such part of the tree",
        f"/tree/gap?{conv}&at={mine[1].id}&count=three": "no such part of the tree",
        f"/tree/subtree?{conv}&head={theirs[0].id}": "no such part of the tree",
        f"/tree/export?chat=telegram:6&conv={info.id}": "no such conversation",
        "/trace?chat=telegram:5&id=nosuch": "no such trace in this chat",
        "/trace?id=nosuch": "no such trace in this chat",
    }
    for path, said in missing.items():
        async with http.get(dashboard.url(path)) as response:
            assert (response.status, await response.text()) == (404, said), path
    page = await (await http.get(dashboard.url("/chats"))).text()
    csrf = page.split('name="csrf-token" content="')[1].split('"')[0]
    for chat, node, said in (("telegram:5", theirs[0].id, "no such message in this chat"),
                             ("telegram:5", "nosuch", "no such message in this chat"),
                             ("no-platform-here", mine[1].id, "no such chat")):
        form = {"csrf": csrf, "chat": chat, "conv": info.id, "node": node}
        async with http.post(dashboard.url("/tree/branch"), data=form, allow_redirects=False) as response:
            assert (response.status, await response.text()) == (404, said), (chat, node)
    for chat, conv_info, last in (("telegram:5", info, mine[-1]), ("telegram:6", other, theirs[-1])):
        stored = await store.conversations.get(chat, conv_info.id)
        assert stored is not None and stored.current_message_id == last.id
    assert await store.dashboard.list_audit() == []
