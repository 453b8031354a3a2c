"""Duels and votes on both backends: a vote is found by its answer's node, a voter's second vote in a duel
replaces the first, another chat's node is no duel's answer, and win rates count votes per model."""

from __future__ import annotations

from bot.store import Store
from bot.store.votes import Entry


async def test_votes_are_stored_on_the_nodes_and_counted_per_model(store: Store) -> None:
    await store.votes.entered("telegram:1", "conv1", "d1", [Entry("m-a", "alpha"), Entry("m-b", "beta")])
    await store.votes.entered("telegram:2", "conv2", "d1", [Entry("n-a", "alpha"), Entry("n-b", "beta")])
    assert await store.votes.vote("telegram:1", "conv1", "m-a", "telegram:7") == Entry("m-a", "alpha")
    assert await store.votes.vote("telegram:1", "conv1", "m-b", "telegram:7") == Entry("m-b", "beta")  # changed mind
    assert await store.votes.vote("telegram:1", "conv1", "m-a", "telegram:8") == Entry("m-a", "alpha")
    assert await store.votes.vote("telegram:2", "conv2", "n-b", "telegram:9") == Entry("n-b", "beta")
    assert await store.votes.vote("telegram:2", "conv2", "m-a", "telegram:9") is None  # another chat's answer
    assert await store.votes.vote("telegram:1", "conv1", "nope", "telegram:9") is None
    assert await store.votes.vote("telegram:1", "conv2", "m-a", "telegram:9") is None  # another conversation's
    rates = {r.name: (r.wins, r.ballots) for r in await store.votes.win_rates()}
    assert rates == {"beta": (2, 3), "alpha": (1, 3)}
    assert [r.name for r in await store.votes.win_rates()] == ["beta", "alpha"]


async def test_forgetting_a_chat_takes_its_duels_and_votes(store: Store) -> None:
    await store.votes.entered("telegram:1", "conv1", "d1", [Entry("m-a", "alpha"), Entry("m-b", "beta")])
    await store.votes.vote("telegram:1", "conv1", "m-a", "telegram:7")
    erased = await store.forget.forget_chat("telegram:1")
    assert erased["duels"] == 2 and erased["votes"] == 1
    assert await store.votes.win_rates() == []


async def test_win_rates_per_agent_and_topic_and_a_duels_rivals_in_order(store: Store) -> None:
    duel = [Entry("m-b", "beta", "main"), Entry("m-a", "alpha", "main")]
    await store.votes.entered("telegram:1", "conv1", "d1", duel, "coding")
    await store.votes.entered("telegram:1", "conv1", "d2", [Entry("n-a", "alpha", "main"), Entry("n-b", "beta", "ops")])
    for node, voter in (("m-a", "telegram:7"), ("m-b", "telegram:8"), ("n-b", "telegram:7")):
        await store.votes.vote("telegram:1", "conv1", node, voter)
    assert [(r.name, r.wins, r.ballots) for r in await store.votes.win_rates(by="agent")] == [
        ("main", 2, 3), ("ops", 1, 1)]  # two answers of one agent: each vote one ballot
    assert [(r.name, r.wins) for r in await store.votes.win_rates(topic="coding")] == [("alpha", 1), ("beta", 1)]
    assert [(r.name, r.wins) for r in await store.votes.win_rates(topic="")] == [("beta", 1), ("alpha", 0)]
    assert await store.votes.win_rates(topic="travel") == []
    assert await store.votes.topics() == [("", 1), ("coding", 1)]
    assert await store.votes.rivals("telegram:1", "conv1", "m-a") == duel
    assert await store.votes.rivals("telegram:2", "conv1", "m-a") == []
