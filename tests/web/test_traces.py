"""A tree node's detail shows the trace of the run that produced it; the JSON API serves it within its chat."""

from __future__ import annotations

import aiohttp
import pytest

from bot.chats.sessions import SessionKey
from tests.fakes.openai_api import FakeOpenAI, Text, ToolCalls
from tests.web.browser import Browser
from tests.web.conftest import Dashboard, recording, sign_in
from tests.web.test_api import signed_in

CHAT = "recording:c1"


@pytest.fixture
def dashboard(chatting: Dashboard) -> Dashboard:
    """Every run here needs a platform to chat on."""
    return chatting


async def traced_run(dashboard: Dashboard, fake: FakeOpenAI) -> tuple[str, str, list[str]]:
    """One answered question with a tool call: (conversation id, trace id, ids of the messages on the path)."""
    chat = recording(dashboard)
    fake.script(ToolCalls([("call_1", "list_files", '{"dirpath": "."}')]), Text("Your folder is empty."))
    await chat.say("what is in my folder?")
    await dashboard.app.hub.idle()
    await dashboard.app.traces.drain()
    conv_id = (await dashboard.app.store.conversations.recent(CHAT))[0].id
    path = dashboard.app.lanes.session(SessionKey("recording", "c1")).path
    trace_id = path[-1].trace_id
    assert trace_id is not None
    return conv_id, trace_id, [m.id for m in path]


async def test_the_api_serves_a_trace_only_within_its_chat(dashboard: Dashboard, fake: FakeOpenAI,
                                                           http: aiohttp.ClientSession) -> None:
    conv_id, trace_id, ids = await traced_run(dashboard, fake)
    async with aiohttp.ClientSession() as stranger:
        refused = await stranger.get(dashboard.url(f"/api/v1/trace?chat={CHAT}&id={trace_id}"))
        assert refused.status == 401
    await signed_in(http, dashboard)
    message = await (await http.get(dashboard.url(f"/api/v1/message?chat={CHAT}&conv={conv_id}&node={ids[-1]}"))
                     ).json()
    assert message["message"]["trace_id"] == trace_id and message["path"][0]["trace_id"] is None
    found = await (await http.get(dashboard.url(f"/api/v1/trace?chat={CHAT}&id={trace_id}"))).json()
    trace = found["trace"]
    usage = [sum(len(m.get("content") or "") for m in r["body"]["messages"]) // 4 + 1 for r in fake.requests]
    assert (trace["id"], trace["chat"], trace["conversation_id"], trace["model"], trace["outcome"]) == (
        trace_id, CHAT, conv_id, "fake-model", "ok")
    assert (trace["prompt_tokens"], trace["completion_tokens"]) == (sum(usage), 4)
    assert [(s["kind"], s["name"], s["outcome"]) for s in trace["steps"]] == [
        ("model", "fake-model", "ok"), ("tool", "list_files", "ok"), ("model", "fake-model", "ok")]
    assert trace["steps"][1]["arguments"] == '{"dirpath": "."}'
    elsewhere = await http.get(dashboard.url(f"/api/v1/trace?chat=recording:c2&id={trace_id}"))
    assert elsewhere.status == 404  # another chat's trace is "not found", like an unknown id
    assert (await http.get(dashboard.url(f"/api/v1/trace?chat={CHAT}&id=nosuch"))).status == 404


async def test_clicking_a_node_shows_its_runs_model_tokens_and_tool_steps(dashboard: Dashboard, fake: FakeOpenAI,
                                                                          browser: Browser) -> None:
    conv_id, trace_id, ids = await traced_run(dashboard, fake)
    trace = await dashboard.app.store.traces.get(CHAT, trace_id)
    assert trace is not None
    await sign_in(browser, dashboard)
    page = browser.page
    await page.goto(dashboard.url(f"/tree?chat={CHAT}&conv={conv_id}"))
    detail = page.locator("#detail section.detail")

    await page.click(f"#tree a.node[data-node='{ids[0]}']")  # the user's question: no run produced it
    await page.locator(f"#detail section.detail[data-node='{ids[0]}']").wait_for()
    assert await detail.locator("dd.model").inner_text() == "—"
    assert await detail.locator("ol.trace-steps").count() == 0

    await page.click(f"#tree a.node[data-node='{ids[-1]}']")  # the answer
    await page.locator(f"#detail section.detail[data-node='{ids[-1]}']").wait_for()
    assert await detail.locator("dd.model").inner_text() == "fake-model"
    assert await detail.locator("dd.tokens").inner_text() == f"{trace.prompt_tokens} in · 4 out"
    assert await detail.locator("dd.ttft").inner_text() == f"{trace.ttft_ms} ms"
    assert await detail.locator("a.trace-id").inner_text() == trace_id
    steps = detail.locator("ol.trace-steps li")
    assert await steps.count() == 3
    assert await steps.nth(1).locator(".tool-name").inner_text() == "list_files"
    assert await steps.nth(1).locator("pre.arguments").inner_text() == '{"dirpath": "."}'
    assert "1 tool call" in await steps.nth(0).inner_text()
    await browser.screenshot("trace")

    await page.click(f"#tree a.node[data-node='{ids[2]}']")  # the tool's result: the same run
    await page.locator(f"#detail section.detail[data-node='{ids[2]}']").wait_for()
    assert await detail.locator("a.trace-id").inner_text() == trace_id
