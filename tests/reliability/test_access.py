"""Access policies per platform: allow-lists, admins, DM pairing (chat and CLI), group command rights."""

from __future__ import annotations

import asyncio
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

from bot.chats.pairing import CODE_TTL, Pairing
from bot.messages import ChatRef
from bot.store.sqlite import SqliteStore
from tests.fakes.openai_api import FakeOpenAI
from tests.harness import RecordingAdapter, running_app

REPO = Path(__file__).resolve().parents[2]


def platform_adapter() -> RecordingAdapter:
    """An in-memory adapter that the access rules treat as Telegram."""
    rec = RecordingAdapter()
    rec.name = "telegram"
    return rec


def policy(**access: Any) -> dict[str, Any]:
    return {"telegram": {"access": access}}


async def test_pairing_code_then_admin_approval_in_chat(tmp_path: Path, fake: FakeOpenAI) -> None:
    rec = platform_adapter()
    config = policy(dm_policy="pairing", admins=["boss"])
    async with running_app(tmp_path, fake.base_url, adapters=(rec,), config=config) as app:
        await rec.say("hello?", chat_id="dm-stranger", user="stranger")
        await rec.say("anyone?", chat_id="dm-stranger", user="stranger")
        await app.hub.idle()
        first, second = rec.texts("dm-stranger")
        code = re.search(r"code is ([A-Z2-9]{8})", first)
        assert code is not None and code.group(1) in second  # the same pending code, not a new one each time
        assert fake.requests == []  # nothing was processed
        await rec.say(f"/pair approve {code.group(1).lower()}", chat_id="dm-boss", user="boss")
        await app.hub.idle()
        assert rec.texts("dm-boss") == ["Approved: user stranger can now talk to me."]
        await rec.say("now?", chat_id="dm-stranger", user="stranger")
        await app.hub.idle()
    assert rec.texts("dm-stranger")[-1] == "now?"
    assert len(fake.requests) == 1


async def test_pairing_code_expires_after_an_hour(tmp_path: Path) -> None:
    store = SqliteStore(tmp_path / "db.sqlite3")
    await store.open()
    now = [1_700_000_000.0]
    try:
        pairing = Pairing(store.pairing, clock=lambda: now[0])
        late, timely = await pairing.code_for("telegram", "u1"), await pairing.code_for("telegram", "u2")
        assert late != timely
        now[0] += CODE_TTL - 1
        assert await pairing.approve("telegram", timely) == "u2"  # still valid a second before the hour
        now[0] += 2
        assert await pairing.approve("telegram", late) is None
        assert not await pairing.is_paired("telegram", "u1") and await pairing.is_paired("telegram", "u2")
    finally:
        await store.close()


async def test_pair_approve_from_the_command_line(tmp_path: Path, fake: FakeOpenAI) -> None:
    config = policy(dm_policy="pairing")
    rec = platform_adapter()
    async with running_app(tmp_path, fake.base_url, adapters=(rec,), config=config) as app:
        await rec.say("hi", chat_id="dm1", user="u9")
        await app.hub.idle()
    code = re.search(r"code is ([A-Z2-9]{8})", rec.texts("dm1")[0])
    assert code is not None

    def cli(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run([sys.executable, "-m", "bot", "--config", str(tmp_path / "bothub.yaml"), *args],
                              cwd=REPO, capture_output=True, text=True, timeout=30)

    wrong = cli("pair", "approve", "WRONG234", "--platform", "telegram")
    assert wrong.returncode == 1 and "no pending telegram pairing" in wrong.stderr
    right = cli("pair", "approve", code.group(1), "--platform", "telegram")
    assert right.returncode == 0 and "approved telegram user u9" in right.stdout
    rec2 = platform_adapter()
    async with running_app(tmp_path, fake.base_url, adapters=(rec2,), config=config) as app:
        await rec2.say("hi again", chat_id="dm1", user="u9", message_id="after-approval")
        await app.hub.idle()
    assert rec2.texts("dm1") == ["hi again"]


async def test_allowlists_refuse_politely_and_never_run(tmp_path: Path, fake: FakeOpenAI) -> None:
    rec = platform_adapter()
    config = policy(dm_policy="allowlist", group_policy="allowlist", allow_users=["friend"],
                    allow_chats=["g-ok"], admins=["boss"])
    async with running_app(tmp_path, fake.base_url, adapters=(rec,), config=config) as app:
        await rec.say("let me in", chat_id="dm-x", user="x")
        await rec.say("/new", chat_id="dm-x", user="x")
        await rec.say("hi from a strange group", chat_id="g-no", user="friend", group=True)
        await rec.say("/pair approve ABCDEFGH", chat_id="dm-x", user="x")  # only admins may use /pair
        await rec.say("/tree", chat_id="g-no2", user="friend", group=True)
        await rec.say("friend here", chat_id="dm-f", user="friend")
        await rec.say("boss anywhere", chat_id="g-no", user="boss", group=True)
        await rec.say("ok group", chat_id="g-ok", user="y", group=True)
        await app.hub.idle()
    refusal = "Sorry, this bot is not open to you here."
    assert rec.texts("dm-x") == [refusal] * 3
    assert rec.texts("g-no") == ["[User boss] boss anywhere"]  # a refused group stays silent to mentions
    assert rec.texts("g-no2") == [refusal]  # but an explicit command gets its one line
    assert rec.texts("dm-f") == ["friend here"]
    assert rec.texts("g-ok") == ["[User y] ok group"]
    assert len(fake.requests) == 3


async def test_group_navigation_can_be_reserved_for_admins(tmp_path: Path, fake: FakeOpenAI) -> None:
    rec = platform_adapter()
    config = policy(group_commands="admins", admins=["boss"])
    async with running_app(tmp_path, fake.base_url, adapters=(rec,), config=config) as app:
        for command in ("/new", "/goto 1", "/retry", "/switch abc", "/stop", "/model other", "/lang zh"):
            await rec.say(command, chat_id="g", user="member", group=True)
        await rec.say("/new", chat_id="g", user="boss", group=True)
        await rec.say("/new", chat_id="dm", user="member")  # in a DM everyone navigates
        await app.hub.idle()
    assert rec.texts("g")[:7] == ["Only admins can do that here."] * 7
    assert rec.texts("g")[7].startswith("New conversation")  # in English: /lang zh did not apply
    assert rec.texts("dm")[0].startswith("New conversation")


async def test_pairing_codes_asked_for_at_the_same_moment_all_survive(tmp_path: Path) -> None:
    store = SqliteStore(tmp_path / "bothub.sqlite3")
    await store.open()
    try:
        pairing = Pairing(store.pairing)
        codes = await asyncio.gather(*(pairing.code_for("telegram", f"stranger{i}") for i in range(10)))
        assert len(set(codes)) == 10
        for i, code in enumerate(codes):
            assert await pairing.approve("telegram", code) == f"stranger{i}"
        assert all([await pairing.is_paired("telegram", f"stranger{i}") for i in range(10)])
    finally:
        await store.close()


async def test_conversation_titles_are_listed_only_to_whom_access_lets_in(tmp_path: Path, fake: FakeOpenAI) -> None:
    """Autocomplete (Discord /switch) shows a channel's conversation titles: never to someone refused there."""
    rec = platform_adapter()
    config = policy(group_policy="allowlist", allow_chats=["open-room"], admins=["boss"])
    async with running_app(tmp_path, fake.base_url, adapters=(rec,), config=config) as app:
        for room in ("open-room", "closed-room"):
            await rec.say(f"secret plans for {room}", chat_id=room, user="boss", group=True)
        await app.hub.idle()
        listing = app.services().list_conversations

        def room(name: str) -> ChatRef:
            return ChatRef("telegram", name, None, is_group=True)

        titles = [c.title for c in await listing(room("closed-room"), "boss")]
        assert titles == ["[User boss] secret plans for closed-room"]
        assert await listing(room("closed-room"), "stranger") == []
        open_titles = [c.title for c in await listing(room("open-room"), "stranger")]
        assert open_titles == ["[User boss] secret plans for open-room"]
