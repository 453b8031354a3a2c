"""The dashboard's replay page: a replay node's detail links to it; it shows the text diff against the answer
replayed and both runs' tokens, cost and time, for a replay whose head was written in either language, in the
browser's language; anything that is not a replay of this conversation is "not found"."""

from __future__ import annotations

import re

import aiohttp

from bot.run.replay_report import unified
from bot.web.dashboard import url
from bot.web.replays import diff_lines
from tests.web.conftest import PASSWORD, Dashboard
from tests.web.seed import replayed


def text_of(html: str) -> str:
    return re.sub(r"\s+", " ", re.sub(r"<[^>]+>", " ", html))


async def test_a_replay_node_links_to_its_diff_and_figures_in_either_language(
        dashboard: Dashboard, http: aiohttp.ClientSession) -> None:
    await http.post(dashboard.url("/login"), data={"password": PASSWORD})
    for lang, compare, tokens, title in (("en", "Compare with #2", "tokens", "Replay of #2 · beta"),
                                         ("zh", "与 #2 对比", "令牌", "#2 的重放 · beta")):
        chat = f"telegram:{lang}"
        info, original, replay = await replayed(dashboard.app.store, chat, lang)
        headers = {"Accept-Language": lang}
        detail = await (await http.get(dashboard.url(url("/tree/node", chat=chat, conv=info.id, node=replay.id)),
                                       headers=headers)).text()
        page = url("/tree/replay", chat=chat, conv=info.id, node=replay.id)
        assert f'<a href="{page.replace("&", "&amp;")}">{compare}</a>' in detail
        plain = await (await http.get(dashboard.url(url("/tree/node", chat=chat, conv=info.id, node=original.id)),
                                      headers=headers)).text()
        assert "/tree/replay" not in plain  # the original is no replay

        response = await http.get(dashboard.url(page), headers=headers)
        assert response.status == 200
        html = await response.text()
        assert f"<h1>{title}</h1>" in html
        assert '<span class="del">-It says version one.</span>' in html
        assert '<span class="add">+It now says version one.</span>' in html
        assert '<span class="same"> I wrote the note.</span>' in html
        figures = text_of(html.split('class="list replay-figures"')[1].split("</table>")[0])
        assert f"{tokens} 300 + 12 280 + 15" in figures
        assert "alpha beta" in figures and "1.23 s 0.87 s" in figures
        assert "version one." in text_of(html.split('class="card replay-side replayed"')[1])


async def test_what_is_not_a_replay_of_this_conversation_is_not_found(
        dashboard: Dashboard, http: aiohttp.ClientSession) -> None:
    info, original, replay = await replayed(dashboard.app.store, "telegram:1", "en")
    await http.post(dashboard.url("/login"), data={"password": PASSWORD})
    for chat, node in (("telegram:1", original.id), ("telegram:2", replay.id), ("telegram:1", "nothere")):
        response = await http.get(dashboard.url(url("/tree/replay", chat=chat, conv=info.id, node=node)))
        assert response.status == 404, (chat, node)


def test_only_the_first_two_lines_of_a_diff_are_its_file_names() -> None:
    diff = unified("hello\n-- signed", "hello\n++ signed", "#2", "replay")
    assert diff_lines(diff) == [("file", "--- #2"), ("file", "+++ replay"), ("hunk", "@@ -1,2 +1,2 @@"),
                                ("same", " hello"), ("del", "--- signed"), ("add", "+++ signed")]
    assert diff_lines("") == []


async def test_a_viewer_reads_a_replay_page_as_the_tree_it_is_part_of(dashboard: Dashboard,
                                                                       http: aiohttp.ClientSession) -> None:
    info, _, replay = await replayed(dashboard.app.store, "telegram:1", "en")
    signed = await http.post(dashboard.url("/login"), data={"password": PASSWORD, "next": "/accounts"})
    token = re.search(r'name="csrf-token" content="([^"]+)"', await signed.text())
    assert token is not None
    await http.post(dashboard.url("/accounts"), data={"csrf": token.group(1), "name": "vic", "role": "viewer",
                                                      "agents": "default", "password": "vic-password-1"})
    async with aiohttp.ClientSession(cookie_jar=aiohttp.CookieJar(unsafe=True)) as vic:
        await vic.post(dashboard.url("/login"), data={"account": "vic", "password": "vic-password-1"})
        for path in ("/tree", "/tree/replay"):
            response = await vic.get(dashboard.url(url(path, chat="telegram:1", conv=info.id, node=replay.id)))
            assert response.status == 200, path
        assert (await vic.get(dashboard.url("/admin"))).status == 403  # a scoped account indeed
