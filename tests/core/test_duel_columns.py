"""A duel where the platform shows columns, on a small message limit: one message holds both answers side by side,
an answer longer than its column's share continues after it (its vote button under its last part), and a topic
tag request that fails leaves the duel stored untagged; an agent named in a duel answers with its own workspace
and model, and its win counts for it. And what a model's reply must look like to be a tag."""

from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import Any

from bot.agent.topics import TAGGER, clean_tag
from bot.fleet.model import Agent
from tests.fakes.openai_api import Error, FakeOpenAI, Step, Text
from tests.harness import ROOMY, RecordingAdapter, answer_requests, running_app, wait_for

LONG = " ".join(f"alpha{i}" for i in range(150))  # about 1 200 characters: several shares of a 600 limit


def by_model(body: dict[str, Any]) -> Step:
    if body["messages"][0]["content"] == TAGGER:
        return Error(400, "invalid_request_error")
    return Text({"alpha": LONG, "beta": "beta is short"}.get(body["model"], "the first answer"))


async def test_columns_hold_both_answers_and_a_long_one_continues_after_them(tmp_path: Path, fake: FakeOpenAI) -> None:
    fake.responder = by_model
    rec = RecordingAdapter(dataclasses.replace(ROOMY, columns=2, max_text=600))
    config = {"llm": {"allowed_models": ["alpha", "beta"], "auto_titles": False}}
    async with running_app(tmp_path, fake.base_url, config=config, adapters=(rec,)) as app:
        await rec.say("which is better?")
        await app.hub.idle()
        await rec.say("/duel")
        await app.hub.idle()
        messages = [reply for _, reply in rec.visible.values()][1:]  # after the first answer
        card, *rest = messages
        alpha, beta = card.columns
        assert card.title is not None and card.title.startswith("⚔ Duel on your last message: alpha · beta")
        assert (alpha.title, beta.title) == ("Answer 1 · alpha", "Answer 2 · beta")
        assert beta.text == "beta is short" and [[b.action for b in row] for row in beta.buttons] == [["/vote 4"]]
        assert alpha.buttons == () and LONG.startswith(alpha.text) and len(alpha.text) < 300
        assert rest and rest[0].title == "Answer 1 · alpha" and all(not r.columns for r in rest)
        assert " ".join([alpha.text, *(r.text for r in rest)]).split() == LONG.split()  # nothing lost
        assert [[b.action for b in row] for row in rest[-1].buttons] == [["/vote 3"]]
        assert all(len(r.text) <= 600 for r in rest)
        assert await app.store.votes.topics() == [("", 1)]  # the tag failed: the duel is stored untagged


def test_a_tag_is_one_or_two_lowercase_words() -> None:
    assert clean_tag("Coding") == "coding"
    assert clean_tag('"Tag: Machine Learning."\nbecause…') == "machine-learning"
    assert clean_tag("the first answer") == ""  # three words: no tag
    assert clean_tag("编程") == "" and clean_tag("") == "" and clean_tag("x" * 40) == ""


async def test_an_agent_contends_with_its_own_workspace_and_model_and_wins_for_its_agent(
        tmp_path: Path, fake: FakeOpenAI) -> None:
    fake.responder = lambda body: Text(f"[{body['model']}] ok")
    rec = RecordingAdapter()
    config = {"llm": {"allowed_models": ["alpha", "beta"], "auto_titles": False}}
    async with running_app(tmp_path, fake.base_url, config=config, adapters=(rec,)) as app:
        soul = app.cfg.data_dir / "ws" / "helper" / "SOUL.md"
        soul.parent.mkdir(parents=True)
        soul.write_text("You are Helper. persona-helper\n", encoding="utf-8")
        await app.fleet.put_agent(Agent(name="helper", workspace=Path("ws/helper"), model="helper-model"), "test")
        app.fleet_watch.poke()
        await wait_for(lambda: "helper" in app.roster.agents)
        await rec.say("which is better?")
        await app.hub.idle()
        await rec.say("/duel alpha helper")
        await app.hub.idle()
        duel = {r["body"]["model"]: r["body"]["messages"][0]["content"] for r in answer_requests(fake)[1:]}
        assert set(duel) == {"alpha", "helper-model"}
        assert "persona-helper" in duel["helper-model"] and "persona-helper" not in duel["alpha"]
        answers = [reply for _, reply in rec.visible.values()][-2:]
        assert [r.title for r in answers] == ["Answer 1 · alpha", "Answer 2 · helper"]
        await rec.say("/vote 4")
        await app.hub.idle()
        assert [(r.name, r.wins, r.ballots) for r in await app.store.votes.win_rates(by="agent")] == [
            ("helper", 1, 1), ("default", 0, 1)]
        assert [r.name for r in await app.store.votes.win_rates()] == ["helper-model", "alpha"]
