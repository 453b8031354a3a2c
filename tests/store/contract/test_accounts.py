"""Dashboard accounts in the store: created with a password hash, changed keeping it, listed by name, removed."""

from __future__ import annotations

from bot.store import Account, Store


async def test_accounts_are_kept_changed_and_removed(store: Store) -> None:
    accounts = store.accounts
    assert await accounts.list() == [] and await accounts.get("ann") is None
    await accounts.put(Account("ann", "admin", ("helper", "coder")), "scrypt$hash-1")
    await accounts.put(Account("bob", "viewer"), "scrypt$hash-2")
    found = await accounts.get("ann")
    assert found is not None and found[1] == "scrypt$hash-1"
    assert (found[0].role, found[0].agents) == ("admin", ("helper", "coder")) and found[0].created_at is not None
    await accounts.put(Account("ann", "viewer", ("helper",)), None)  # the password stays
    found = await accounts.get("ann")
    assert found is not None and (found[0].role, found[0].agents, found[1]) == ("viewer", ("helper",), "scrypt$hash-1")
    await accounts.put(Account("ann", "viewer", ("helper",)), "scrypt$hash-3")
    assert (await accounts.get("ann") or (None, ""))[1] == "scrypt$hash-3"
    assert [a.name for a in await accounts.list()] == ["ann", "bob"]
    assert await accounts.remove("bob") and not await accounts.remove("bob")
    assert [a.name for a in await accounts.list()] == ["ann"]
