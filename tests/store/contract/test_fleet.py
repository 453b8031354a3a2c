"""Agents, identities and bindings in the store: replaced by name, unchanged puts are no-ops, every change in
the history with its actor, credentials only ever sealed, re-sealed in one go under a new key."""

from __future__ import annotations

import asyncio
import json

import pytest

from bot.fleet.secrets import Sealer, SecretKeyError, new_key
from bot.fleet.service import rotate_key
from bot.store import FleetRow, Store
from bot.store.postgres import PostgresStore
from tests.store.conftest import StoreFactory


async def test_rows_are_replaced_by_name_and_an_unchanged_put_records_nothing(store: Store) -> None:
    fleet = store.fleet
    assert await fleet.version() == 0 and await fleet.rows() == []
    assert await fleet.put(FleetRow("agent", "helper", '{"name": "helper"}'), "cli")
    assert not await fleet.put(FleetRow("agent", "helper", '{"name": "helper"}'), "apply")  # the same: no-op
    assert await fleet.put(FleetRow("agent", "helper", '{"model": "m2", "name": "helper"}'), "dashboard:ann")
    [row] = await fleet.rows()
    assert (row.kind, row.name, json.loads(row.spec)["model"]) == ("agent", "helper", "m2")
    assert row.updated_at is not None
    changes = await fleet.changes()
    assert [(c.actor, c.action, c.name) for c in changes] == [("dashboard:ann", "put", "helper"),
                                                              ("cli", "put", "helper")]
    assert await fleet.version() == changes[0].id > changes[1].id
    assert await fleet.remove("agent", "helper", "cli")
    assert not await fleet.remove("agent", "helper", "cli")
    assert await fleet.rows() == []
    [gone, *_] = await fleet.changes(kind="agent")
    assert (gone.action, gone.spec) == ("remove", "")


async def test_credentials_stay_sealed_and_are_kept_when_not_given(store: Store) -> None:
    sealer = Sealer(new_key())
    sealed = sealer.seal({"TOKEN": "t0p-secret-value"}, "support")
    await store.fleet.put(FleetRow("identity", "support", '{"name": "support"}', sealed), "cli")
    await store.fleet.put(FleetRow("identity", "support", '{"enabled": false, "name": "support"}'), "cli")
    [row] = await store.fleet.rows()
    assert row.sealed == sealed and "t0p-secret" not in (row.sealed or "")
    assert sealer.open(row.sealed or "", "support") == {"TOKEN": "t0p-secret-value"}
    with pytest.raises(SecretKeyError):  # bound to its owner: moved to another identity it does not open
        sealer.open(row.sealed or "", "other")
    changes = await store.fleet.changes()
    assert [c.credentials for c in changes] == [False, True]
    assert all("t0p-secret" not in c.spec for c in changes)


async def test_a_new_key_reseals_everything_and_the_old_one_no_longer_opens(new_store: StoreFactory) -> None:
    store = new_store()
    await store.open()
    old, new = Sealer(new_key()), Sealer(new_key())
    for name in ("a1", "b2"):
        await store.fleet.put(FleetRow("identity", name, "{}", old.seal({"T": f"value-{name}"}, name)), "cli")
    await store.fleet.put(FleetRow("identity", "plain", "{}"), "cli")
    assert await rotate_key(store.fleet, old, new) == 2
    await store.close()
    store = new_store()
    await store.open()
    try:
        rows = {r.name: r.sealed for r in await store.fleet.rows()}
        assert new.open(rows["a1"] or "", "a1") == {"T": "value-a1"} and rows["plain"] is None
        with pytest.raises(SecretKeyError):
            old.open(rows["b2"] or "", "b2")
        with pytest.raises(SecretKeyError):  # the wrong old key changes nothing
            await rotate_key(store.fleet, old, new)
        assert new.open((await store.fleet.rows())[0].sealed or "", "a1") == {"T": "value-a1"}
    finally:
        await store.close()


async def test_another_process_learns_of_a_change(new_store: StoreFactory) -> None:
    """Through a notification where the backend has them (PostgreSQL), always through `version`."""
    writer, reader = new_store(), new_store()
    await writer.open()
    await reader.open()
    told = asyncio.Event()
    stop = await reader.fleet.listen(told.set)
    try:
        before = await reader.fleet.version()
        await writer.fleet.put(FleetRow("agent", "helper", "{}"), "cli")
        assert await reader.fleet.version() > before
        if isinstance(reader, PostgresStore):
            await asyncio.wait_for(told.wait(), 2)
    finally:
        await stop()
        await writer.close()
        await reader.close()
