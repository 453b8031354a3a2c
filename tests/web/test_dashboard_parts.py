"""The dashboard's pure parts (issue 29): forks drawn as forks in a stable order, where a tree click leads,
the chart's axis, the log ring's masking and filter, the language choice, and the one i18n table."""

from __future__ import annotations

import logging
import re
from datetime import UTC, datetime, timedelta
from types import SimpleNamespace

from aiohttp.test_utils import make_mocked_request

from adapters.web.render import render
from bot.commands.conversations import _ago
from bot.commands.info import help_
from bot.httpkit import lang
from bot.i18n import CHAT_KEYS, STRINGS, t
from bot.i18n_web import WEB_STRINGS
from bot.ops.logring import LogRing
from bot.replies import Reply
from bot.store.dashboard import NodeRow
from bot.web.overview import nice_top, traffic_chart
from bot.web.treeview import Branch, Gap, Node, TreeIndex
from tests.web.browser import REPO

NOW = datetime(2026, 12, 1, tzinfo=UTC)


def forked(cursor: str) -> TreeIndex:
    """[1] You → [2] AI, then two answers' worth of branches under [2]: [3]→[4] and [5]→[6]."""
    parents = {"m1": "root", "m2": "m1", "m3": "m2", "m4": "m3", "m5": "m2", "m6": "m5"}
    rows = [NodeRow(mid, int(mid[1]), parent, "user" if int(mid[1]) % 2 else "assistant", mid, NOW, False, False)
            for mid, parent in parents.items()]
    return TreeIndex(rows, "root", cursor)


def heads(branch: Branch) -> list[str]:
    return [b.items[0].id for b in branch.children if isinstance(b.items[0], Node)]


def test_a_fork_is_drawn_as_a_fork_in_the_order_it_was_made_wherever_the_cursor_is() -> None:
    for cursor in ("m6", "m4", "m2"):
        tree = forked(cursor).tree()
        assert [i.id for i in tree.items if isinstance(i, Node)] == ["root", "m1", "m2"]  # the run to the fork
        assert heads(tree) == ["m3", "m5"]  # both branches one level in, oldest first
        assert [[i.id for i in b.items if isinstance(i, Node)] for b in tree.children] == [["m3", "m4"], ["m5", "m6"]]


def test_a_node_leads_to_its_branch_tip_and_the_cursors_path_to_the_cursor() -> None:
    index = forked("m6")
    assert [index.node(m).tip for m in ("m3", "m4", "m5", "m2", "root")] == [4, 4, 6, 6, 6]
    index = forked("m2")  # the cursor went back up: the path's tip is the cursor, elsewhere the newest leaf
    assert [index.node(m).tip for m in ("m1", "m3", "m5")] == [2, 4, 6]


def test_a_spent_budget_folds_runs_to_their_fork() -> None:
    parents = {f"n{i}": f"n{i - 1}" if i > 1 else "root" for i in range(1, 30)}
    rows = [NodeRow(mid, int(mid[1:]), parent, "user", mid, NOW, False, False) for mid, parent in parents.items()]
    index = TreeIndex(rows, "root", "root")  # the cursor elsewhere
    assert [type(i).__name__ for i in index._fold([*parents], tight=True)] == ["Gap", "Node"]
    assert isinstance(index._fold([*parents])[2], Gap) and len(index._fold([*parents])) == 5


def test_the_chart_axis_ends_on_a_round_number() -> None:
    assert [nice_top(n) for n in (0, 1, 3, 7, 11, 120, 5000)] == [1, 1, 5, 10, 20, 200, 5000]
    chart = traffic_chart([0, 4, 10], [2, 0, 0])
    assert chart["top"] == 10 and chart["in"][2] == (21, 0, 100, 10) and chart["out"][0] == (5, 80, 20, 2)


def test_the_log_ring_masks_secrets_and_filters_by_level() -> None:
    logger = logging.getLogger("test.logring")
    ring = LogRing(["supersecretvalue"], capacity=4)
    logger.addHandler(ring)
    logger.setLevel(logging.DEBUG)
    try:
        for line in ("dropped", "noise"):
            logger.debug(line)
        logger.warning("key supersecretvalue and Authorization: Bearer abcdefghijklmnop")
        logger.error("boom %d", 7)
        logger.info("fine")
    finally:
        logger.removeHandler(ring)
    kept = ["key *** and Authorization: Bearer ***", "boom 7", "fine"]  # secrets masked
    assert [line.message for line in ring.tail("DEBUG")] == ["noise", *kept]  # the oldest fell off
    assert [line.level for line in ring.tail("WARNING")] == ["WARNING", "ERROR"]
    assert [line.message for line in ring.tail("nonsense")] == kept  # an unknown level reads as INFO


def test_the_language_is_the_switch_then_the_browser_then_english() -> None:
    def pick(headers: dict[str, str]) -> str:
        return lang.pick(make_mocked_request("GET", "/", headers=headers))

    assert pick({"Accept-Language": "zh-CN,zh;q=0.9,en;q=0.8"}) == "zh"
    assert pick({"Accept-Language": "fr-FR,en;q=0.5"}) == "en"
    assert pick({"Accept-Language": "fr"}) == "en"
    assert pick({"Accept-Language": "zh-TW", "Cookie": "bothub_lang=en"}) == "en"


def test_every_dashboard_and_web_chat_word_has_its_chinese() -> None:
    assert not CHAT_KEYS & set(WEB_STRINGS)  # no dashboard word replaces a chat's
    assert all(STRINGS[key] == WEB_STRINGS[key] for key in WEB_STRINGS)
    assert all(zh.strip() for _, zh in WEB_STRINGS.values())
    used, hard_coded = set(), []
    for folder in ("bot/web/templates", "adapters/web/templates"):
        for page in (REPO / folder).glob("*.html"):
            used |= set(re.findall(r"\bt\('([a-z_0-9]+)'", page.read_text()))
            markup = re.sub(r"\{\{.*?\}\}|\{%.*?%\}", "", page.read_text(), flags=re.DOTALL)
            hard_coded += re.findall(r">\s*[A-Za-z][a-z]+ [a-z]+[^<]*<|(?:placeholder|title|aria-label)=\"[A-Za-z]",
                                     markup)
    assert used and not used - set(STRINGS), used - set(STRINGS)
    assert hard_coded == []  # words on a page come from the table, not from the template


def test_list_says_how_long_ago_in_the_chats_language() -> None:
    for language, expected in (("en", ["just now", "5 min ago", "3 h ago"]), ("zh", ["刚刚", "5 分钟前", "3 小时前"])):
        ctx = SimpleNamespace(t=lambda key, _lang=language, **v: t(_lang, key, **v))
        assert [_ago(ctx, NOW, NOW - timedelta(seconds=s)) for s in (10, 300, 3 * 3600)] == expected  # type: ignore[arg-type]


async def test_help_keeps_one_command_per_line_in_the_web_chat() -> None:
    ctx = SimpleNamespace(t=lambda key, **v: t("en", key, **v), lang="en", msg=SimpleNamespace(is_group=False))
    reply: Reply = await help_(ctx)  # type: ignore[arg-type]
    html = render(reply)["html"]
    assert html.count("<br />") >= 10 and "/goto &lt;N&gt;" in html
