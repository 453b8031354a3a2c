"""A duel on Telegram (the real PTB adapter against the fake Bot API): both answers stream at once, each in its
own message headed with its model, each with a vote button; pressing one stores the vote, replaces the pressed
message with the answer marked chosen and puts the cursor on it, so the next question continues that branch."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from tests.fakes.openai_api import FakeOpenAI, Step, Text
from tests.fakes.telegram_api import FakeTelegram
from tests.harness import answer_requests, running_app, wait_for

WORDS = 80


def by_model(body: dict[str, Any]) -> Step:
    if body["model"] == "fake-model":
        return Text("the first answer")
    return Text(" ".join(f"{body['model']}{i}" for i in range(WORDS)), delay=0.1)


async def test_a_duel_streams_both_answers_and_a_vote_picks_the_branch(
        tmp_path: Path, fake: FakeOpenAI, tg: FakeTelegram) -> None:
    fake.responder = by_model
    config = {"llm": {"allowed_models": ["alpha", "beta"]}}
    async with running_app(tmp_path, fake.base_url, ("telegram",), env=tg.env, config=config) as app:
        tg.inject_message(42, "which is better?")
        await wait_for(lambda: tg.bot_texts(42) == ["the first answer"])
        tg.inject_message(42, "/duel")
        await wait_for(lambda: sum(bool(m.reply_markup) for m in tg.messages(42)) == 2, within=20)
        alpha, beta = (next(m for m in tg.messages(42) if m.from_bot and m.text.startswith(f"Answer {i}"))
                       for i in (1, 2))
        assert alpha.text.startswith("Answer 1 · alpha") and alpha.text.endswith(f"alpha{WORDS - 1}")
        assert beta.text.startswith("Answer 2 · beta") and beta.text.endswith(f"beta{WORDS - 1}")
        edits = [c.params["message_id"] for c in tg.calls if c.method == "editMessageText"]
        assert edits.count(alpha.message_id) >= 2 and edits.count(beta.message_id) >= 2  # both streamed…
        first_beta = edits.index(beta.message_id)
        last_alpha = len(edits) - 1 - edits[::-1].index(alpha.message_id)
        assert first_beta < last_alpha  # …side by side, not one after the other
        [[vote]] = beta.reply_markup["inline_keyboard"]  # type: ignore[index]
        assert vote["callback_data"] == "/vote 4"  # [1] question, [2] first answer, [3] alpha, [4] beta
        query = tg.inject_callback(42, beta.message_id, "/vote 4")
        await wait_for(lambda: "chosen" in beta.text)
        assert query in tg.answered and beta.text.endswith(f"beta{WORDS - 1}")  # replaced, the answer kept
        rates = await app.store.votes.win_rates()
        assert [(r.name, r.wins, r.ballots) for r in rates] == [("beta", 1, 1), ("alpha", 0, 1)]
        metrics = app.metrics.render().decode()
        assert 'bothub_duel_votes_total{model="beta"} 1.0' in metrics
        assert 'bothub_duel_win_rate{model="beta"} 1.0' in metrics
        assert 'bothub_duel_win_rate{model="alpha"} 0.0' in metrics
        tg.inject_message(42, "and now?")
        await wait_for(lambda: len(answer_requests(fake)) == 4)
        history = [m["content"] for m in answer_requests(fake)[-1]["body"]["messages"][1:]]
        assert history[-2].startswith("beta0") and not any(str(h).startswith("alpha0") for h in history)
