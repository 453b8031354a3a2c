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
    rates = {r.model: (r.wins, r.ballots) for r in await store.votes.win_rates()}
    assert rates == {"beta": (2, 3), "alpha": (1, 3)}
    assert [r.model for r in await store.votes.win_rates()] == ["beta", "alpha"]


async def test_forgetting_a_chat_takes_its_duels_and_votes(store: Store) -> None:
    await store.votes.entered("telegram:1", "conv1", "d1", [Entry("m-a", "alpha"), Entry("m-b", "beta")])
    await store.votes.vote("telegram:1", "conv1", "m-a", "telegram:7")
    erased = await store.forget.forget_chat("telegram:1")
    assert erased["duels"] == 2 and erased["votes"] == 1
    assert await store.votes.win_rates() == []
