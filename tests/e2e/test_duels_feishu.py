"""A duel on Feishu (the real adapter against the fake open platform, its frequency limits judged): one card with a
column per contender, streamed by updating that one card, ending with a vote button in each column; pressing one
stores the vote (under the duel's topic tag) and redraws the card with the choice marked, both answers kept."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest

from bot.agent.topics import TAGGER
from bot.app import App
from tests.e2e.test_feishu_e2e import GROUP, VERIFICATION_TOKEN, answered, feishu_env, mention, push
from tests.e2e.test_feishu_e2e import feishu_fake as feishu_fake  # the fixture
from tests.fakes.feishu_api import FakeFeishu
from tests.fakes.feishu_cards import walk
from tests.fakes.feishu_events import card_action_event
from tests.fakes.openai_api import FakeOpenAI, Step, Text
from tests.harness import running_app, wait_for

WORDS = 40


def by_model(body: dict[str, Any]) -> Step:
    if body["messages"][0]["content"] == TAGGER:
        return Text("Coding")
    if body["model"] == "fake-model":
        return Text("the first answer")
    return Text(" ".join(f"{body['model']}{i}" for i in range(WORDS)), delay=0.05)


@pytest.fixture
async def app(tmp_path: Path, fake: FakeOpenAI, feishu_fake: FakeFeishu) -> AsyncIterator[App]:
    fake.responder = by_model
    config = {"server": {"port": 0}, "feishu": {"transport": "webhook"}, "llm": {"allowed_models": ["alpha", "beta"]}}
    async with running_app(tmp_path, fake.base_url, ("feishu",), config=config, env=feishu_env(feishu_fake)) as running:
        yield running


def card_of(message: dict[str, Any]) -> dict[str, Any]:
    return dict(json.loads(message["content"]))


def columns(card: dict[str, Any]) -> list[dict[str, Any]]:
    return [c for e in card["body"]["elements"] if e["tag"] == "column_set" for c in e["columns"]
            if c.get("width") == "weighted"]


def texts(column: dict[str, Any]) -> list[str]:
    return [e["content"] for e in walk(column["elements"]) if e["tag"] == "markdown"]


def votes(column: dict[str, Any]) -> list[str]:
    return [e["behaviors"][0]["value"]["action"] for e in walk(column["elements"]) if e["tag"] == "button"]


async def test_a_duel_is_one_card_with_a_column_per_model_streamed_and_voted(
        app: App, feishu_fake: FakeFeishu) -> None:
    server = feishu_fake
    server.chat_modes[GROUP] = "group"
    await mention(app, server, "ev-q", "which is better?")
    await answered(server, "the first answer")
    before = set(server.messages)
    await mention(app, server, "ev-duel", "/duel")
    await wait_for(lambda: any(len(votes(c)) == 1 for m in server.messages.values() if m["msg_type"] == "interactive"
                               for c in columns(card_of(m))), within=20)
    new = [m_id for m_id in server.messages if m_id not in before and not server.messages[m_id].get("from_user")]
    assert len(new) == 1  # the duel is one card: no start message, no message per model
    [duel] = new
    card = card_of(server.messages[duel])
    assert card["header"]["title"]["content"].startswith("⚔ Duel on your last message: alpha · beta")
    alpha, beta = columns(card)
    assert texts(alpha) == ["**Answer 1 · alpha**", " ".join(f"alpha{i}" for i in range(WORDS))]
    assert texts(beta) == ["**Answer 2 · beta**", " ".join(f"beta{i}" for i in range(WORDS))]
    assert votes(alpha) == ["/vote 3"] and votes(beta) == ["/vote 4"]  # [1] question, [2] first answer
    patches = [c for c in server.calls if c.method == "PATCH" and duel in c.path]
    streamed = [columns(json.loads(c.body["content"])) for c in patches[:-1]]
    assert len(streamed) >= 2 and all(len(cs) == 2 for cs in streamed)  # updated in place while both grew
    assert any(texts(a)[1] not in ("…", texts(alpha)[1]) and texts(b)[1] not in ("…", texts(beta)[1])
               for a, b in streamed)  # a moment where both answers were partly written: side by side
    assert not server.requests("POST", "id_convert") and not server.card_errors

    await push(app, card_action_event("ev-vote", "/vote 4", card_message_id=duel, chat_id=GROUP,
                                      token=VERIFICATION_TOKEN))
    await wait_for(lambda: "chosen" in card_of(server.messages[duel]).get("header", {}).get("title", {})
                   .get("content", ""))
    voted = card_of(server.messages[duel])
    assert [texts(c)[0] for c in columns(voted)] == ["**Answer 1 · alpha**", "**🏆 Answer 2 · beta**"]
    assert texts(columns(voted)[1])[1] == texts(beta)[1]  # both answers stay on the card
    rates = await app.store.votes.win_rates(topic="coding")
    assert [(r.name, r.wins, r.ballots) for r in rates] == [("beta", 1, 1), ("alpha", 0, 1)]
