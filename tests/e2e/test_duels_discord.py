"""A duel on Discord (the real discord.py adapter against the fake Discord): both answers stream at once, each in
its own message headed with its model and carrying its vote button; pressing one replaces that message with the
answer marked chosen and stores the vote."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from bot.app import App
from tests.e2e.test_discord_e2e import _mention, discord_env, discord_fake  # noqa: F401 (the fake's fixture)
from tests.fakes.discord_api import CHANNEL_ID, FakeDiscord
from tests.fakes.openai_api import FakeOpenAI, Step, Text
from tests.harness import running_app, wait_for


def by_model(body: dict[str, Any]) -> Step:
    if body["model"] == "fake-model":
        return Text("the first answer")
    return Text(" ".join(f"{body['model']}{i}" for i in range(60)), delay=0.1)


async def test_a_duel_streams_both_answers_and_a_press_votes(
        tmp_path: Path, fake: FakeOpenAI, discord_fake: FakeDiscord) -> None:  # noqa: F811
    fake.responder = by_model
    config = {"llm": {"allowed_models": ["alpha", "beta"]}}
    async with running_app(tmp_path, fake.base_url, ("discord",), env=discord_env(discord_fake),
                           config=config) as app:
        await _duel(app, discord_fake)


async def _duel(app: App, server: FakeDiscord) -> None:
    await _mention(server, "which is better?")
    await wait_for(lambda: any(m["content"] == "the first answer" for m in server.messages.values()))
    await _mention(server, "/duel")
    await wait_for(lambda: sum(bool(m["components"]) for m in server.messages.values()) == 2, within=20)
    alpha, beta = (dict(next(m for m in server.messages.values() if m["content"].startswith(f"**Answer {i}")))
                   for i in (1, 2))
    assert alpha["content"].startswith("**Answer 1 · alpha**") and alpha["content"].endswith("alpha59")
    assert beta["content"].startswith("**Answer 2 · beta**") and beta["content"].endswith("beta59")
    for message in (alpha, beta):  # each streamed: edited before its last edit
        assert len(server.calls_to("PATCH", rf"/channels/{CHANNEL_ID}/messages/{message['id']}")) >= 2
    [vote] = [b["custom_id"] for row in beta["components"] for b in row["components"]]
    assert vote == "/vote 4"
    await server.dispatch("INTERACTION_CREATE", server.button_press(beta["id"], vote))
    await wait_for(lambda: "chosen" in server.messages[beta["id"]]["content"])
    assert server.messages[beta["id"]]["content"].endswith("beta59")  # the pressed answer, kept and marked
    rates = await app.store.votes.win_rates()
    assert [(r.name, r.wins) for r in rates] == [("beta", 1), ("alpha", 0)]
