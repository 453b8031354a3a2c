"""Linked chats through the real hub: `/handoff link` in one DM, `/resume CODE` in a DM on another platform, and
both share one history both ways — the model reads what was said in the other — while each answer goes back
where it was asked; `/unlink` gives the DM its own history back. Groups cannot link, a code works once."""

from __future__ import annotations

import re
from pathlib import Path

from bot.app import App
from bot.chats.sessions import SessionKey
from bot.i18n import t
from tests.fakes.openai_api import FakeOpenAI
from tests.harness import RecordingAdapter, running_app

CODE = re.compile(r"/resume ([A-Z2-9]{6})")


class Elsewhere(RecordingAdapter):
    name = "elsewhere"


async def said(rec: RecordingAdapter, app: App, text: str, chat: str, user: str = "u1", group: bool = False) -> str:
    await rec.say(text, chat_id=chat, user=user, group=group)
    await app.hub.idle()
    return rec.texts(chat)[-1]


def asked(fake: FakeOpenAI) -> str:
    """What the model read in its last request, every message of it."""
    return "\n".join(str(m["content"]) for m in fake.requests[-1]["body"]["messages"])


async def test_two_direct_chats_share_one_history_until_unlinked(tmp_path: Path, fake: FakeOpenAI) -> None:
    here, there = RecordingAdapter(), Elsewhere()
    async with running_app(tmp_path, fake.base_url, adapters=(here, there)) as app:
        await said(there, app, "there on its own", chat="d1", user="9")
        await said(here, app, "my cat is called Mochi", chat="c1")
        offered = await said(here, app, "/handoff link", chat="c1")
        found = CODE.search(offered)
        assert found, offered
        code = found.group(1)

        linked = await said(there, app, f"/resume {code}", chat="d1", user="9")
        assert linked == t("en", "link_done", where="recording")
        assert await said(there, app, f"/resume {code}", chat="d2", user="9") == t("en", "resume_unknown", id=code)

        assert await said(there, app, "what is my cat called?", chat="d1", user="9") == "what is my cat called?"
        assert "Mochi" in asked(fake) and "there on its own" not in asked(fake)  # the home's history, not its own
        assert here.texts("c1")[-1] == offered  # the answer went where it was asked, nothing to the other chat
        await said(here, app, "and back here?", chat="c1")
        assert "what is my cat called?" in asked(fake)  # both ways: one history
        key = SessionKey("recording", "c1").storage_key
        [conv] = await app.store.conversations.recent(key)
        assert conv.message_count == 6  # three turns, from both chats, in the home's one conversation
        assert await said(there, app, f"/resume {code}", chat="d1", user="9") == t("en", "resume_unknown", id=code)

        assert await said(there, app, "/unlink", chat="d1", user="9") == t("en", "unlink_done", where="recording")
        await said(there, app, "who am I again?", chat="d1", user="9")
        assert "there on its own" in asked(fake) and "Mochi" not in asked(fake)  # its own history is back
        assert await said(there, app, "/unlink", chat="d1", user="9") == t("en", "unlink_none")


async def test_groups_cannot_link_and_a_chat_cannot_link_to_itself(tmp_path: Path, fake: FakeOpenAI) -> None:
    here = RecordingAdapter()
    async with running_app(tmp_path, fake.base_url, adapters=(here,)) as app:
        assert await said(here, app, "/handoff link", chat="g1", group=True) == t("en", "link_dm_only")
        found = CODE.search(await said(here, app, "/handoff link", chat="c1"))
        assert found
        assert await said(here, app, f"/resume {found.group(1)}", chat="c1") == t("en", "handoff_same_chat")
        assert await said(here, app, f"/resume {found.group(1)}", chat="g1", group=True) == t("en", "link_dm_only")
        assert await app.store.handoffs.links() == {}
