"""Compaction on the tree: a 200-turn branch is summarized once, on a node, and every branch below reuses it."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest
import pytest_asyncio

from bot.agent.prompt import estimate_messages
from bot.store.sqlite import SqliteStore
from bot.tree.model import Message
from tests.fakes.openai_api import FakeOpenAI, Step, Text
from tests.harness import RecordingAdapter, running_app, wait_for

CHAT = "recording:c1"
CHEAP = "cheap-model"
FILLER = "and some more words about the garden, the weather, the budget and the plans for next week " * 2


def responder(body: dict[str, Any]) -> Step:
    """The summarizer (the cheap model) answers with a fixed summary; the chat model says which prompt it got."""
    if body["model"] == CHEAP:
        return Text("SUMMARY: the user planned a garden; budget 300 EUR.")
    return Text(f"answer to {body['messages'][-1]['content'][:40]}")


@pytest_asyncio.fixture
async def llm() -> Any:
    server = FakeOpenAI(responder=responder)
    await server.start()
    yield server
    await server.stop()


def turns(count: int) -> list[Message]:
    """`count` user turns; every 10th answer calls a tool first, so tool pairs run through the branch."""
    out: list[Message] = []
    parent: str | None = None

    def add(message: Message) -> None:
        nonlocal parent
        message.parent_id = parent
        out.append(message)
        parent = message.id

    for i in range(count):
        add(Message.new("user", f"question {i} {FILLER}"))
        if i % 10 == 0:
            call = {"id": f"call{i}", "type": "function", "function": {"name": "recall", "arguments": "{}"}}
            add(Message.new("assistant", "", tool_calls=[call]))
            add(Message.new("tool", f"found note {i}", tool_call_id=f"call{i}"))
        add(Message.new("assistant", f"answer {i} {FILLER}"))
    return out


async def seed(data_dir: Path, count: int) -> list[Message]:
    store = SqliteStore(data_dir / "bothub.sqlite3")
    await store.open()
    info = await store.conversations.create(CHAT)
    branch = turns(count)
    branch[0].parent_id = info.root_id
    await store.conversations.append(CHAT, info.id, branch)
    await store.close()
    return branch


def summary_requests(fake: FakeOpenAI) -> int:
    return sum(1 for r in fake.requests if r["body"]["model"] == CHEAP)


def last_prompt(fake: FakeOpenAI) -> list[dict[str, Any]]:
    messages: list[dict[str, Any]] = [r for r in fake.requests if r["body"]["model"] != CHEAP][-1]["body"]["messages"]
    return messages


def assert_tool_pairs_intact(messages: list[dict[str, Any]]) -> None:
    for i, m in enumerate(messages):
        if m["role"] == "tool":
            caller = messages[i - 1]
            assert caller["role"] == "assistant" and caller["tool_calls"][0]["id"] == m["tool_call_id"]
        if m.get("tool_calls"):
            assert messages[i + 1]["role"] == "tool"


async def test_a_long_branch_is_summarized_once_and_branches_below_reuse_it(tmp_path: Path, llm: FakeOpenAI) -> None:
    branch = await seed(tmp_path / "data", 200)
    config = {"llm": {"context_tokens": 6000, "skill_model": CHEAP}}
    rec = RecordingAdapter()
    async with running_app(tmp_path, llm.base_url, adapters=(rec,), config=config) as app:
        await rec.say("what was the budget?")
        await wait_for(lambda: rec.texts()[-1:] == ["answer to what was the budget?"])
        assert summary_requests(llm) == 1
        prompt = last_prompt(llm)
        assert prompt[1]["role"] == "system" and prompt[1]["content"].startswith(
            "Summary of the earlier part of this conversation (")
        assert prompt[1]["content"].endswith("SUMMARY: the user planned a garden; budget 300 EUR.")
        assert prompt[2]["role"] == "user"  # the kept part starts at a turn: no tool result without its call
        assert_tool_pairs_intact(prompt)
        summarizer = next(r for r in llm.requests if r["body"]["model"] == CHEAP)["body"]["messages"]
        assert summarizer[1]["content"].startswith(f"User: question 0 {FILLER[:20]}")
        assert "\nAssistant (calls recall):\nTool result: found note 0\n" in summarizer[1]["content"]

        cid = await app.store.conversations.active(CHAT)
        assert cid is not None
        summaries = await app.store.summaries.of_conversation(CHAT, cid)
        (node, summary), = summaries.items()
        at = next(i for i, m in enumerate(branch) if m.id == node)
        assert branch[at + 1].role == "user" and summary.covered == at + 1
        full = [{"role": "system", "content": prompt[0]["content"]}, *[m.to_openai() for m in branch],
                {"role": "user", "content": "what was the budget?"}]
        full_tokens, sent_tokens = estimate_messages(full), estimate_messages(prompt)
        assert sent_tokens < 6000 < full_tokens and sent_tokens * 4 < full_tokens
        print(f"\n200-turn branch: full history {full_tokens} tokens, compacted prompt {sent_tokens} tokens")

        conv = await app.store.conversations.load(CHAT, cid, "")
        assert conv is not None
        for label, below in (("B", at + 6), ("C", at + 20)):  # two branches forking below the summary node
            await rec.say(f"/goto {conv.messages[branch[below].id].number}")
            await rec.say(f"branch {label} question")
            await wait_for(lambda label=label: rec.texts()[-1:] == [f"answer to branch {label} question"])
            prompt = last_prompt(llm)
            assert prompt[1]["content"].endswith("budget 300 EUR.") and prompt[-2]["content"].startswith(
                "question" if branch[below].role == "user" else "answer")
            assert_tool_pairs_intact(prompt)
        assert summary_requests(llm) == 1  # made once, reused by both branches

        await rec.say("/tree")
        await rec.say("/status")
        await app.hub.idle()
        tree, status = rec.texts()[-2:]
        assert f"≡ summary of the {summary.covered} messages up to here" in tree
        assert f"Summarized: the oldest {summary.covered} of the " in status
        assert await app.store.summaries.of_conversation("recording:other", cid) == {}  # scoped by chat
        with pytest.raises(KeyError):
            await app.store.summaries.put("recording:other", cid, node, "injected", 1)

    async with running_app(tmp_path, llm.base_url, adapters=(rec,), config=config) as app:  # after a restart
        await rec.say("still there?")
        await wait_for(lambda: rec.texts()[-1:] == ["answer to still there?"])
        assert last_prompt(llm)[1]["content"].endswith("budget 300 EUR.") and summary_requests(llm) == 1


async def test_compact_command(tmp_path: Path, llm: FakeOpenAI) -> None:
    await seed(tmp_path / "data", 1)
    rec = RecordingAdapter()
    async with running_app(tmp_path, llm.base_url, adapters=(rec,), config={"llm": {"skill_model": CHEAP}}) as app:
        await rec.say("/compact")
        await app.hub.idle()
        assert rec.texts()[-1] == "Nothing to summarize yet: this branch is still short."
        for i in range(3):
            await rec.say(f"more {i}")
            await app.hub.idle()
        await rec.say("/compact")
        await app.hub.idle()
        assert rec.texts()[-1] == ("Summarized the oldest 6 messages of this branch; "
                                   "4 recent ones stay as they are.")
        await rec.say("and now?")
        await app.hub.idle()
        prompt = last_prompt(llm)
        assert prompt[1]["content"].startswith("Summary of the earlier part of this conversation (6 messages)")
        assert [m["content"] for m in prompt[2:]] == ["more 1", "answer to more 1", "more 2", "answer to more 2",
                                                       "and now?"]
        assert summary_requests(llm) == 1


def through(body: dict[str, Any]) -> Step:
    """Like `responder`, but each summary names the last question it was given, so a prompt shows whose it is."""
    if body["model"] == CHEAP:
        asked = re.findall(r"User: question (\d+) ", body["messages"][1]["content"])
        return Text(f"SUMMARY through question {asked[-1]}.")
    return Text(f"answer to {body['messages'][-1]['content'][:40]}")


async def test_a_branch_forking_above_the_summary_never_borrows_it(tmp_path: Path) -> None:
    """The summary sits on the main branch's path only: a branch forking above its node must be given its own
    messages, then a summary of its own path, never the other branch's (facts it never saw)."""
    branch = await seed(tmp_path / "data", 200)
    rec, llm = RecordingAdapter(), FakeOpenAI(responder=through)
    await llm.start()
    try:
        async with running_app(tmp_path, llm.base_url, adapters=(rec,),
                               config={"llm": {"context_tokens": 6000, "skill_model": CHEAP}}) as app:
            await rec.say("what was the budget?")
            await wait_for(lambda: rec.texts()[-1:] == ["answer to what was the budget?"])
            cid = await app.store.conversations.active(CHAT)
            assert cid is not None
            [main_node] = await app.store.summaries.of_conversation(CHAT, cid)
            at = next(i for i, m in enumerate(branch) if m.id == main_node)
            conv = await app.store.conversations.load(CHAT, cid, "")
            assert conv is not None and summary_requests(llm) == 1

            await rec.say(f"/goto {conv.messages[branch[5].id].number}")  # below "answer 1": six messages up
            await rec.say("early branch question")
            await wait_for(lambda: rec.texts()[-1:] == ["answer to early branch question"])
            prompt = last_prompt(llm)
            assert [m["role"] for m in prompt] == ["system", "user", "assistant", "tool", "assistant", "user",
                                                   "assistant", "user"]
            assert prompt[1]["content"].startswith("question 0 ") and prompt[-1]["content"] == "early branch question"
            assert "SUMMARY" not in str(prompt) and summary_requests(llm) == 1

            fork = max(i for i in range(at - 40) if branch[i].role == "assistant" and branch[i].content)
            forked_at = int(branch[fork].content.split()[1])  # "answer N …"
            await rec.say(f"/goto {conv.messages[branch[fork].id].number}")
            await rec.say("long branch question")
            await wait_for(lambda: rec.texts()[-1:] == ["answer to long branch question"])
            assert summary_requests(llm) == 2, "a path over the budget without a summary gets one of its own"
            own = (await app.store.summaries.of_conversation(CHAT, cid)).keys() - {main_node}
            [own_node] = own
            assert own_node in {m.id for m in branch[:fork + 1]}, "stored on the branch's own path"
            prompt = last_prompt(llm)
            summarized = int(prompt[1]["content"].rsplit(" ", 1)[1].rstrip("."))
            assert summarized < forked_at and "SUMMARY" not in str(prompt[2:])
            assert prompt[-2]["content"].startswith(f"answer {forked_at} ")
            assert_tool_pairs_intact(prompt)
    finally:
        await llm.stop()
