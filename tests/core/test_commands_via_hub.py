"""Commands that only had unit tests, typed into the real hub: /tree, /skills, /roles, /list, /approve, /deny."""

from __future__ import annotations

from pathlib import Path

from bot.chats.sessions import SessionKey
from tests.fakes.openai_api import FakeOpenAI, Text, ToolCalls
from tests.harness import RecordingAdapter, running_app, wait_for

NO_SUCH_REQUEST = "There is no pending request with that id (it may have expired or been decided)."


async def test_tree_skills_roles_and_list_show_exactly_this_chat(tmp_path: Path, fake: FakeOpenAI) -> None:
    rec = RecordingAdapter()
    async with running_app(tmp_path, fake.base_url, adapters=(rec,)) as app:
        for text in ("one", "two", "/goto 2", "branch", "/tree", "/skills", "/roles", "/list"):
            await rec.say(text)
            await app.hub.idle()
        conversation = app.lanes.session(SessionKey("recording", "c1")).conversation_id
    tree, skills, roles, listing = (reply for _, reply in list(rec.visible.values())[-4:])
    assert tree.title == f"Conversation {conversation}" and tree.monospace
    system, *lines = tree.text.split("\n")
    assert system.startswith("[0] System: ")
    assert lines == ["[1] You: one", "[2] AI: one", "├─ [3] You: two", "│  [4] AI: two", "└─ [5] You: branch",
                     "   [6] AI: branch ← you are here"]
    assert [[b.action for b in row] for row in tree.buttons] == [["/goto 6", "/goto 2", "/goto 4"]]
    assert (skills.title, skills.text.split("\n")[:4]) == ("Skills", [
        "[    on] code-reviewer (prompt, workspace) — Reviews code for readability, bugs and best practices",
        "[    on] summarize-url (tool, workspace) — Fetch a public web page and summarize it in a few bullet points",
        "[    on] Weekly report (prompt, workspace) — 当用户请求“周报”、“weekly report”、“总结本周”时激活。",
        "[    on] code-review (tool, builtin) — Review code or a diff for bugs, security problems and unclear parts, "
        "most serious first"])
    assert len(skills.text.split("\n")) == 3 + 9  # the built-in summarize-url is replaced by the workspace's
    assert (roles.title, roles.text) == ("Roles", "· coder\n· default")
    assert (listing.title, listing.text) == ("Conversations (1)", f"▶ `{conversation}` one · 6 msgs · just now")


async def test_approve_and_deny_through_the_hub(tmp_path: Path, fake: FakeOpenAI) -> None:
    rec = RecordingAdapter()
    config = {"tools": {"shell_enabled": True}}
    async with running_app(tmp_path, fake.base_url, config=config, adapters=(rec,)) as app:
        await rec.say("/approve 0000 forever")
        await rec.say("/approve")  # no id: the one waiting here, and there is none
        await rec.say("/deny 0000")
        await app.hub.idle()
        assert rec.texts()[-3:] == ["Usage: /approve [id] [once|conv|always]", NO_SUCH_REQUEST, NO_SUCH_REQUEST]

        fake.script(ToolCalls([("call_1", "shell", '{"command": "rm notes.txt"}')]), Text("Left it alone."))
        await rec.say("tidy up")
        await wait_for(lambda: any(r.buttons for _, r in rec.sent))
        [prompt] = [r for _, r in rec.sent if r.buttons]
        approve, deny = (button.action for row in prompt.buttons for button in row)  # destructive: once only
        approval_id = approve.split()[1]
        assert (approve, deny) == (f"/approve {approval_id} once", f"/deny {approval_id}")
        await rec.say(deny, chat_id="c2")  # another chat's press looks exactly like an unknown id
        await wait_for(lambda: rec.texts("c2") == [NO_SUCH_REQUEST])
        await rec.say(deny)
        await app.hub.idle()
        await rec.say(approve)  # decided already
        await app.hub.idle()
    assert rec.texts()[-3:] == ["Denied: `rm notes.txt`", "Left it alone.", NO_SUCH_REQUEST]
    tool_result = next(m for m in fake.requests[-1]["body"]["messages"] if m["role"] == "tool")
    assert tool_result["content"] == ("The user denied this command; it was not run. Do not retry it; "
                                      "ask what they want instead.")


async def test_list_says_how_long_ago_in_the_chats_language(tmp_path: Path, fake: FakeOpenAI) -> None:
    """Item 11: a Chinese chat's /list said "now"."""
    rec = RecordingAdapter()
    async with running_app(tmp_path, fake.base_url, adapters=(rec,)) as app:
        for text in ("/lang zh", "你好", "/list"):
            await rec.say(text)
            await app.hub.idle()
    listing = list(rec.visible.values())[-1][1]
    assert listing.text.endswith("· 2 条 · 刚刚") and "now" not in listing.text
