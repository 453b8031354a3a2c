"""HTTP API tokens: kept by digest only, listed newest first, revoked once, found after a restart."""

from __future__ import annotations

from bot.chats.api_tokens import ApiTokens, digest
from bot.store import Store
from tests.store.conftest import StoreFactory


async def test_a_token_is_found_by_its_digest_until_it_is_revoked(store: Store) -> None:
    tokens = ApiTokens(store.api_tokens, store.dashboard)
    made, secret = await tokens.create("  billing   system ", "tests")
    assert made.name == "billing system" and made.live and len(made.id) == 12
    holder = await tokens.check(secret)
    assert holder is not None and (holder.id, holder.name) == (made.id, "billing system")
    assert await tokens.check(secret + "x") is None and await tokens.check("") is None
    assert await tokens.revoke(made.id, "tests")
    assert not await tokens.revoke(made.id, "tests")  # revoked already
    assert not await tokens.revoke("no-such-id", "tests")
    assert await tokens.check(secret) is None
    found = await store.api_tokens.by_digest(digest(secret))
    assert found is not None and not found.live and found.revoked_at is not None
    audit = [(e.actor, e.action, e.target, e.detail) for e in await store.dashboard.list_audit()]
    assert audit == [("tests", "api-token-revoke", made.id, ""),
                     ("tests", "api-token-create", made.id, "billing system")]


async def test_tokens_are_listed_newest_first_and_survive_a_restart(new_store: StoreFactory) -> None:
    store = new_store()
    await store.open()
    tokens = ApiTokens(store.api_tokens, store.dashboard)
    secrets = [(await tokens.create(f"system {i}", "tests"))[1] for i in range(3)]
    await store.close()
    store = new_store()
    await store.open()
    try:
        listed = await ApiTokens(store.api_tokens, store.dashboard).list()
        assert [t.name for t in listed] == ["system 2", "system 1", "system 0"]
        assert [h.name for s in secrets if (h := await ApiTokens(store.api_tokens, store.dashboard).check(s))] == \
            ["system 0", "system 1", "system 2"]
    finally:
        await store.close()


async def test_the_store_never_holds_the_token_itself(store: Store) -> None:
    made, secret = await ApiTokens(store.api_tokens, store.dashboard).create("ci", "tests")
    assert await store.api_tokens.by_digest(secret) is None  # the token itself is no key to anything
    found = await store.api_tokens.by_digest(digest(secret))
    assert found is not None and found.id == made.id
