"""Duels on the console, as a user scripts them (piped `bothub chat`, a real SQLite file): both models answer
side by side with tools off, the vote is stored on the node and its branch becomes the cursor."""

from __future__ import annotations

import sqlite3
from pathlib import Path
from typing import Any

import yaml

from tests.e2e.test_console import chat, last_tree
from tests.fakes.openai_api import FakeOpenAI, Step, Text
from tests.harness import answer_requests


def by_model(body: dict[str, Any]) -> Step:
    return Text(f"{body['model']} says four")


async def test_a_duel_answers_with_both_models_and_the_vote_moves_the_cursor(tmp_path: Path) -> None:
    fake = FakeOpenAI(responder=by_model)
    await fake.start()
    config = tmp_path / "duel.yaml"
    config.write_text(yaml.safe_dump({"llm": {"allowed_models": ["alpha", "beta"], "auto_titles": False}}))
    try:
        out = await chat(tmp_path / "data", fake.base_url, "what is 2+2\n/duel\n/vote 4\n/tree\n",
                         "--config", str(config))
    finally:
        await fake.stop()
    assert "Tools are off during a duel" in out
    assert "== Answer 1 · alpha ==" in out and "== Answer 2 · beta ==" in out
    tree = last_tree(out)
    assert "[3] AI: alpha says four" in tree and "[4] AI: beta says four ← you are here" in tree
    assert "#4 (beta) chosen" in out
    duel = [r["body"] for r in answer_requests(fake)[1:]]
    assert sorted(r["model"] for r in duel) == ["alpha", "beta"]
    assert answer_requests(fake)[0]["body"]["tools"]  # a plain answer is offered the tools…
    assert all(not r.get("tools") for r in duel)  # …a duel offers none to either contender
    assert all(r["messages"][-1]["content"] == "what is 2+2" for r in duel)  # the same question, the same history
    db = sqlite3.connect(tmp_path / "data" / "bothub.sqlite3")
    try:
        voted = db.execute("SELECT d.model FROM votes v JOIN duels d ON d.message_id = v.message_id").fetchall()
        entered = db.execute("SELECT model FROM duels ORDER BY model").fetchall()
    finally:
        db.close()
    assert voted == [("beta",)] and entered == [("alpha",), ("beta",)]
