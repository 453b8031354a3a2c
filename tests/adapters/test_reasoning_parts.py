"""The reply's reasoning part (thinking mode) as each platform shows it: folded where the platform can — a
Telegram expandable blockquote (checked by the strict fake's HTML parser), a Discord spoiler, a Feishu
collapsible panel (checked by the fake's card rules), the web chat's <details> — and a quote in the
console and on DingTalk; the answer's text stays apart; a long answer keeps room for it on its first message only."""

from __future__ import annotations

from adapters.console.render import render as console
from adapters.dingtalk import render as dingtalk
from adapters.discord.render import render as discord
from adapters.feishu import render as feishu
from adapters.telegram.render import render_parts
from adapters.web.render import render as web
from bot.replies import Reply, reasoning_room, shown_reasoning, split_reply
from tests.fakes.feishu_cards import check_card
from tests.fakes.telegram_rules import parse_html

THOUGHT = "Two plus two.\nThat is <four> || sure."
REPLY = Reply("It is **four**.", reasoning=THOUGHT)


def test_telegram_folds_it_in_an_expandable_blockquote() -> None:
    [part] = render_parts(REPLY.text, reasoning=REPLY.reasoning)
    text, entities = parse_html(part.html)
    assert text == f"{THOUGHT}\nIt is four."
    quote = next(e for e in entities if e.type == "expandable_blockquote")
    assert (quote.offset, quote.length) == (0, len(THOUGHT))
    [thinking_only] = render_parts("", reasoning="still thinking")
    assert parse_html(thinking_only.html)[0] == "still thinking\n"


def test_discord_hides_it_in_a_spoiler_that_a_pipe_pair_cannot_end() -> None:
    [content] = discord(REPLY)
    assert content == "||💭 Two plus two.\nThat is <four> |\u200b| sure.||\n\nIt is **four**."


def test_feishu_folds_it_in_a_collapsible_panel() -> None:
    card = feishu.card(REPLY, streaming=False)
    assert check_card(card) is None
    panel, answer = card["body"]["elements"]
    assert (panel["tag"], panel["expanded"]) == ("collapsible_panel", False)
    assert panel["elements"][0]["content"] == "Two plus two.\nThat is &lt;four> || sure."  # no card tags
    assert answer["content"] == "It is **four**."
    assert feishu.plain_text(REPLY).startswith("> Two plus two.\n> That is <four>")  # cards refused


def test_the_web_chat_folds_it_in_details_and_the_console_quotes_it() -> None:
    html = web(REPLY)["html"]
    assert html.startswith('<details class="thinking"><summary>💭</summary><p>Two plus two.')
    assert "&lt;four&gt;" in html and html.endswith("<p>It is <strong>four</strong>.</p>\n")
    assert console(REPLY) == "> Two plus two.\n> That is <four> || sure.\n\nIt is **four**."
    assert dingtalk.markdown(REPLY) == "> Two plus two.\n> That is &lt;four> || sure.\n\nIt is **four**."


def test_a_long_answer_keeps_room_for_the_thinking_on_its_first_message_only() -> None:
    limit = 2000
    long = Reply(" ".join(f"word{n}" for n in range(800)), reasoning="x" * 5000, title="T")
    parts = split_reply(long, limit)
    assert parts[0].reasoning == shown_reasoning(long.reasoning, limit) and parts[0].reasoning.startswith("…")
    assert len(parts[0].reasoning) + len(parts[0].text) <= limit - 64 and parts[0].title == "T"
    assert all(not p.reasoning and p.title is None for p in parts[1:])
    assert all(len(p.text) <= limit - reasoning_room(limit) for p in parts)
    assert " ".join(p.text for p in parts) == long.text
