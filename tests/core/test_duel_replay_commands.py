"""/duel, /vote, /retry <model> and /replay through the real hub: odd input gets its polite line (never a crash),
/retry <model> answers with that model for one turn, a failed contender is said so and gets no vote button, and
/stop during a duel shows what each contender had said and stores nothing."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

from bot.app import App
from bot.i18n import t
from bot.replies import Reply
from tests.fakes.openai_api import Error, FakeOpenAI, Step, Text
from tests.harness import RecordingAdapter, running_app, wait_for

ALLOWED = {"llm": {"allowed_models": ["alpha", "beta"], "max_retries": 0}}


async def said(rec: RecordingAdapter, app: App, text: str) -> Reply:
    await rec.say(text)
    await app.hub.idle()
    return [reply for chat, reply in rec.visible.values() if chat.chat_id == "c1"][-1]


async def test_odd_input_is_answered_politely(tmp_path: Path, fake: FakeOpenAI) -> None:
    rec = RecordingAdapter()
    async with running_app(tmp_path, fake.base_url, adapters=(rec,), config=ALLOWED) as app:
        assert (await said(rec, app, "/duel")).text == t("en", "retry_nothing")  # no question yet
        assert (await said(rec, app, "/replay")).text == t("en", "replay_not_answer", n="?")
        await said(rec, app, "hello")  # [1] and its answer [2]
        assert (await said(rec, app, "/duel alpha")).text.startswith("Name two or more models")
        assert (await said(rec, app, "/duel alpha nope")).text == t("en", "model_not_allowed", model="nope",
                                                                     allowed="alpha, beta, default")
        assert (await said(rec, app, "/duel " + "alpha " * 5)).text == t("en", "duel_too_many", n=4)
        assert (await said(rec, app, "/vote 2")).text == t("en", "vote_not_duel", n=2)  # no duel's answer
        assert (await said(rec, app, "/vote 99")).text == t("en", "vote_not_duel", n=99)
        assert (await said(rec, app, "/vote two")).text == t("en", "usage", usage="/vote <N>")
        assert (await said(rec, app, "/replay 1")).text == t("en", "replay_not_answer", n=1)  # a question
        assert (await said(rec, app, "/replay 2 with nope")).text.startswith("Model 'nope' is not allowed")
        assert (await said(rec, app, "/replay 2 3")).text == t("en", "usage", usage="/replay [N] [with model] [tools]")
        assert (await said(rec, app, "/retry nope")).text.startswith("Model 'nope' is not allowed")
        await said(rec, app, "/retry beta")
        assert fake.requests[-1]["body"]["model"] == "beta"  # that model, for this answer…
        await said(rec, app, "again")
        assert fake.requests[-1]["body"]["model"] == "fake-model"  # …only


async def test_a_failed_contender_says_so_and_gets_no_vote(tmp_path: Path, fake: FakeOpenAI) -> None:
    def answer(body: dict[str, Any]) -> Step:
        return Error(500) if body["model"] == "beta" else Text(f"{body['model']} answers")

    rec = RecordingAdapter()
    async with running_app(tmp_path, fake.base_url, adapters=(rec,), config=ALLOWED) as app:
        await said(rec, app, "hello")
        fake.responder = answer
        await said(rec, app, "/duel")
        shown = [reply for _, reply in rec.visible.values()]
        alpha = next(r for r in shown if r.title == "Answer 1 · alpha")
        beta = next(r for r in shown if r.title == "Answer 2 · beta")
        assert alpha.text == "alpha answers" and [[b.action for b in row] for row in alpha.buttons] == [["/vote 3"]]
        assert beta.text == t("en", "duel_failed", model="beta") and not beta.buttons
        tree = (await said(rec, app, "/tree")).text
        assert "[3] AI: alpha answers ← you are here" in tree and "[4]" not in tree


async def test_stop_during_a_duel_keeps_what_was_shown_and_stores_nothing(tmp_path: Path, fake: FakeOpenAI) -> None:
    def slow(body: dict[str, Any]) -> Step:
        return Text(" ".join(f"{body['model']}{i}" for i in range(200)), delay=0.05)

    rec = RecordingAdapter()
    async with running_app(tmp_path, fake.base_url, adapters=(rec,), config=ALLOWED) as app:
        await said(rec, app, "hello")
        fake.responder = slow
        await rec.say("/duel")
        await wait_for(lambda: sum(1 for _, r in rec.visible.values() if r.title and "1" in r.text) >= 2)
        await rec.say("/stop")
        await app.hub.idle()
        await asyncio.sleep(0.2)
        cut = [r for _, r in rec.visible.values() if r.title]
        assert len(cut) == 2 and all(r.text.endswith(t("en", "interrupted")) for r in cut)
        tree = (await said(rec, app, "/tree")).text
        assert "alpha0" not in tree and "beta0" not in tree
