"""The routing rules (most specific binding wins), tool policies, and the checks a change must pass."""

from __future__ import annotations

import logging
from pathlib import Path

import pytest
from pydantic import ValidationError

from bot.fleet.catalog import Catalog, FleetError
from bot.fleet.model import Agent, Binding, Identity, ToolPolicy, choose
from bot.fleet.secrets import SecretKeyError, key_bytes, masked, new_key
from bot.fleet.service import Fleet
from bot.ops import redact
from bot.store.sqlite import SqliteStore

PLACES = [
    Binding(identity="bot", agent="by-identity"),
    Binding(identity="bot", agent="in-groups", kind="group"),
    Binding(identity="bot", agent="for-ann", user_id="ann"),
    Binding(identity="bot", agent="in-chat", chat_id="c1"),
    Binding(identity="bot", agent="in-thread", chat_id="c1", thread_id="t1"),
]


@pytest.mark.parametrize(("chat", "thread", "user", "group", "agent"), [
    ("c1", "t1", "ann", True, "in-thread"),  # thread > chat > user > kind > identity
    ("c1", None, "ann", True, "in-chat"),
    ("c2", None, "ann", True, "for-ann"),
    ("c2", None, "bob", True, "in-groups"),
    ("c2", None, "bob", False, "by-identity"),
])
def test_the_most_specific_binding_wins(chat: str, thread: str | None, user: str, group: bool, agent: str) -> None:
    assert choose(PLACES, chat, thread, user, group) == agent
    assert choose(list(reversed(PLACES)), chat, thread, user, group) == agent  # order does not matter


def test_without_a_binding_the_default_agent_answers_and_a_gone_or_disabled_agent_falls_back() -> None:
    assert choose([], "c", None, "u", False) == "default"
    catalog = Catalog({"default": Agent(name="default")}, {}, (Binding(identity="bot", agent="gone"),))
    assert catalog.agent_for("bot", "c", None, "u", False).name == "default"
    off = Catalog({"default": Agent(name="default"), "off": Agent(name="off", enabled=False)}, {},
                  (Binding(identity="bot", agent="off"),))
    assert off.agent_for("bot", "c", None, "u", False).name == "default"  # a disabled agent's place


def test_tool_policies() -> None:
    policy = ToolPolicy(allow=("read_*", "remember", "shell", "docs__*"), deny=("read_pdf",), shell=False,
                        mcp=("docs",))
    assert policy.permits("read_file") and policy.permits("remember") and policy.permits("docs__search")
    assert not policy.permits("read_pdf") and not policy.permits("shell") and not policy.permits("write_file")
    assert not policy.permits("other__search")  # an MCP server the agent may not use
    assert ToolPolicy().permits("anything")


def test_names_and_places_are_checked() -> None:
    with pytest.raises(ValidationError):
        Agent(name="Has Spaces")
    with pytest.raises(ValidationError):
        Binding(identity="bot", agent="a", thread_id="t1")  # a thread names its chat
    assert Identity(name="telegram", platform="telegram").tag == ""
    assert Identity(name="support", platform="telegram").tag == "support"
    assert "SECRET" not in repr(Identity(name="x", platform="telegram", credentials={"T": "SECRET"}))
    assert "SECRET" not in Identity(name="x", platform="telegram", credentials={"T": "SECRET"}).model_dump_json()


def test_keys_and_masks() -> None:
    assert len(key_bytes(new_key())) == 32 and len(key_bytes("a passphrase")) == 32
    assert masked("123456:ABCDEFGHIJKL") == "••••IJKL" and masked("short") == "••••"


async def test_a_change_must_fit_the_rest_of_the_fleet(tmp_path: Path) -> None:
    store = SqliteStore(tmp_path / "db.sqlite3")
    await store.open()
    try:
        fleet = Fleet(store.fleet, {}, lambda: ([Agent(name="default")], []))
        with pytest.raises(SecretKeyError):  # credentials are stored encrypted or not at all
            await fleet.put_identity(Identity(name="s", platform="telegram", credentials={"TELEGRAM_BOT_TOKEN": "x"}),
                                      "t")
        with pytest.raises(FleetError, match="no platform named"):
            await fleet.put_identity(Identity(name="s", platform="nowhere"), "t")
        with pytest.raises(FleetError, match="reads no credential named OOPS"):
            await fleet.put_identity(Identity(name="s", platform="telegram", credentials={"OOPS": "x"}), "t")
        with pytest.raises(FleetError, match="a platform's"):
            await fleet.put_identity(Identity(name="discord", platform="telegram"), "t")
        with pytest.raises(FleetError, match="default identity"):
            await fleet.put_identity(Identity(name="telegram", platform="telegram"), "t")
        await fleet.put_identity(Identity(name="s", platform="telegram"), "t")
        with pytest.raises(FleetError, match="no agent named 'helper'"):
            await fleet.put_binding(Binding(identity="s", agent="helper"), "t")
        await fleet.put_agent(Agent(name="helper"), "t")
        await fleet.put_binding(Binding(identity="s", agent="helper"), "t")
        with pytest.raises(FleetError, match="still bound"):
            await fleet.remove("agent", "helper", "t")
        with pytest.raises(FleetError, match="default agent"):
            await fleet.remove("agent", "default", "t")
        with pytest.raises(FleetError, match="cannot be disabled"):  # it answers where nothing else does
            await fleet.put_agent(Agent(name="default", enabled=False), "t")
        assert await fleet.remove("binding", "s/*/*/*/*", "t") and await fleet.remove("agent", "helper", "t")
    finally:
        await store.close()


def test_credentials_learnt_later_are_masked_in_logs() -> None:
    root = logging.getLogger()
    handler = logging.Handler()
    root.addHandler(handler)
    try:
        flt = redact.install({}, root)
        redact.add_secrets(["stored-credential-42"])
        record = logging.LogRecord("x", logging.INFO, "", 0, "token is %s", ("stored-credential-42",), None)
        flt.filter(record)
        assert record.getMessage() == "token is ***"
    finally:
        root.removeHandler(handler)
