"""A background task in the dashboard: its side branch is in the conversation's tree, and the sub-agent's answer
leads to the trace of its run (steps included)."""

from __future__ import annotations

import aiohttp
import pytest

from tests.fakes.openai_api import FakeOpenAI, Text, ToolCalls
from tests.harness import wait_for
from tests.web.conftest import Dashboard, recording
from tests.web.test_api import signed_in

CHAT = "recording:c1"


@pytest.fixture
def dashboard(chatting: Dashboard) -> Dashboard:
    return chatting


async def test_a_tasks_branch_and_its_trace_are_in_the_dashboard(dashboard: Dashboard, fake: FakeOpenAI,
                                                                  http: aiohttp.ClientSession) -> None:
    chat = recording(dashboard)
    fake.script(ToolCalls([("call_1", "list_files", '{"dirpath": "."}')]), Text("Nothing in there."))
    await chat.say("/task look in my folder")
    await wait_for(lambda: any(text.startswith("**Task t1**") for text in chat.texts()))
    await dashboard.app.traces.drain()
    conv_id = (await dashboard.app.store.conversations.recent(CHAT))[0].id
    await signed_in(http, dashboard)
    tree = await (await http.get(dashboard.url(f"/api/v1/tree?chat={CHAT}&conv={conv_id}"))).json()
    nodes = {n["id"]: n for n in tree["nodes"]}
    prompt = next(n for n in nodes.values() if n["parent_id"] == tree["root_id"] and "[t1]" in str(n))
    answer = next(n for n in nodes.values() if "Nothing in there." in str(n) and n["parent_id"] != tree["root_id"])
    message = await (await http.get(dashboard.url(f"/api/v1/message?chat={CHAT}&conv={conv_id}&node={answer['id']}"))
                     ).json()
    assert message["path"][0]["id"] == prompt["id"]  # the answer hangs on the task's branch
    trace_id = message["message"]["trace_id"]
    found = await (await http.get(dashboard.url(f"/api/v1/trace?chat={CHAT}&id={trace_id}"))).json()
    assert [(s["kind"], s["name"]) for s in found["trace"]["steps"]] == [
        ("model", "fake-model"), ("tool", "list_files"), ("model", "fake-model")]
