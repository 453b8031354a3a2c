"""`bothub apply`'s file, in process against the real SQLite store: each way the file can be wrong says where;
a changed identity keeps its stored credentials unless the file gives new ones; `--prune` removes what the file
leaves out, bindings before what they name."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import pytest
import pytest_asyncio

from bot.fleet import apply as applying
from bot.fleet.catalog import FleetError
from bot.fleet.model import Agent
from bot.fleet.service import Fleet
from bot.store.sqlite import SqliteStore
from tests.fleet.conftest import KEY, SUPPORT_TOKEN

ENV = {"BOTHUB_SECRET_KEY": KEY, "SUPPORT_TOKEN": SUPPORT_TOKEN, "NEW_TOKEN": "423456:NEW-TOKEN"}
FILE = ("agents:\n  - {name: helper, workspace: ws/helper}\n"
        "identities:\n  - name: support\n    platform: telegram\n"
        "    credentials: {TELEGRAM_BOT_TOKEN: '${SUPPORT_TOKEN}'}\n"
        "bindings:\n  - {identity: support, agent: helper}\n")


@pytest_asyncio.fixture
async def fleet(tmp_path: Path) -> AsyncIterator[Fleet]:
    store = SqliteStore(tmp_path / "bothub.sqlite3")
    await store.open()
    yield Fleet(store.fleet, ENV, lambda: ([Agent(name="default")], []))
    await store.close()


@pytest.mark.parametrize(("text", "said"), [
    ("agents: [", "not valid YAML: "),
    ("- helper\n", "the file holds a mapping with agents:, identities: and bindings: lists"),
    ("agents: []\nmodels: []\n", "the file holds a mapping with agents:, identities: and bindings: lists"),
    ("agents: helper\n", "agents: a list"),
    ("agents:\n  - {name: helper, tools: {shell: maybe}}\n", "agents[1]: tools.shell: "),
    ("agents: []\nidentities:\n  - {name: support, platform: telegram, credentials: {TELEGRAM_BOT_TOKEN: '${GONE}'}}\n",
     "identities[1].credentials.TELEGRAM_BOT_TOKEN: ${GONE} is not set"),
    ("bindings:\n  - {identity: support}\n", "bindings[1]: agent: Field required"),
])
def test_a_wrong_file_says_what_and_where(text: str, said: str) -> None:
    with pytest.raises(FleetError) as refused:
        applying.read(text, ENV)
    assert str(refused.value).startswith(said)


async def plan(fleet: Fleet, text: str, prune: bool = False) -> list[applying.Step]:
    stored = {(row.kind, row.name) for row in await fleet.store.rows()}
    return applying.plan(await fleet.load(), stored, applying.read(text, ENV), prune=prune)


async def test_credentials_are_kept_unless_the_file_gives_new_ones_and_prune_removes_the_rest(fleet: Fleet) -> None:
    assert await applying.apply(fleet, await plan(fleet, FILE)) == 3
    renamed = FILE.replace("platform: telegram\n", "platform: telegram\n    enabled: false\n")
    [step] = await plan(fleet, renamed)
    assert (step.line, step.obj is not None and step.obj.credentials) == (
        "~ identity support: enabled null → false", {})  # kept as stored: not sealed again
    assert await applying.apply(fleet, [step]) == 1
    assert (await fleet.load()).identities["support"].credentials == {"TELEGRAM_BOT_TOKEN": SUPPORT_TOKEN}
    [step] = await plan(fleet, renamed.replace("${SUPPORT_TOKEN}", "${NEW_TOKEN}"))
    assert step.line == "~ identity support: credentials replaced"
    await applying.apply(fleet, [step])
    assert (await fleet.load()).identities["support"].credentials == {"TELEGRAM_BOT_TOKEN": ENV["NEW_TOKEN"]}
    steps = await plan(fleet, "agents: []\n", prune=True)
    assert [s.line for s in steps] == ["- agent helper", "- binding support/*/*/*/*", "- identity support"]
    assert await applying.apply(fleet, steps) == 3  # the binding first: what it names can then go
    assert await fleet.store.rows() == [] and await plan(fleet, "agents: []\n", prune=True) == []
