"""OpenTelemetry export of runs (issue 31 §7): with `traces.otlp_endpoint` set, a run that failed over and
called a tool reaches a real OTLP/HTTP collector (protobuf decoded) as one trace — `invoke_agent` with a
`chat` span per model request (the failed link's marked as an error) and an `execute_tool` span, in the GenAI
semantic conventions, timed inside the run."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from tests.core import test_failover_hub as hub_flow
from tests.fakes.openai_api import Error, FakeOpenAI, Text, ToolCalls
from tests.fakes.otlp_collector import FakeCollector
from tests.harness import RecordingAdapter, running_app

backup = hub_flow.backup


@pytest.fixture
async def collector() -> AsyncIterator[FakeCollector]:
    server = FakeCollector()
    await server.start()
    yield server
    await server.stop()


async def test_a_run_is_exported_as_genai_spans(tmp_path: Path, fake: FakeOpenAI, backup: FakeOpenAI,
                                                collector: FakeCollector) -> None:
    rec = RecordingAdapter()
    fake.script(Error(503), Text("The folder is empty."))  # the second request starts on the first link again
    backup.script(ToolCalls([("call_1", "list_files", "{}")]))
    config, env = hub_flow.chained(fake, backup)
    config["traces"] = {"otlp_endpoint": collector.endpoint}
    async with running_app(tmp_path, fake.base_url, adapters=(rec,), config=config, env=env) as app:
        await rec.say("what is in my folder?")
        await app.hub.idle()
        assert rec.texts() == ["The folder is empty."]
    # the app's stop sent what was queued
    names = [s.name for s in collector.spans]
    assert sorted(names) == sorted(["invoke_agent default", "chat fake-model", "chat spare-model",
                                    "execute_tool list_files", "chat fake-model"])
    root = next(s for s in collector.spans if s.name == "invoke_agent default")
    assert root.service == "bothub" and root.parent_id == "" and root.status != 2
    assert root.attributes["gen_ai.operation.name"] == "invoke_agent"
    assert {s.trace_id for s in collector.spans} == {root.trace_id}
    children = [s for s in collector.spans if s is not root]
    ms = 1_000_000  # the trace keeps milliseconds
    for s in children:
        assert s.parent_id == root.span_id and root.start_ns <= s.start_ns <= s.end_ns <= root.end_ns + ms, s
    failed, *answered = sorted((s for s in children if s.name.startswith("chat")), key=lambda s: s.start_ns)
    assert failed.status == 2 and failed.attributes["gen_ai.provider.name"] == "main"
    assert failed.attributes["error.type"] == "provider_error"
    assert [s.attributes["gen_ai.request.model"] for s in answered] == ["spare-model", "fake-model"]
    for span in answered:
        assert span.kind == 3 and span.status != 2  # CLIENT
        assert span.attributes["gen_ai.operation.name"] == "chat"
        assert span.attributes["gen_ai.usage.input_tokens"] > 0 and "gen_ai.usage.output_tokens" in span.attributes
    tool = next(s for s in children if s.name == "execute_tool list_files")
    assert tool.attributes["gen_ai.tool.name"] == "list_files" and answered[0].end_ns <= tool.start_ns + ms
    assert root.attributes["gen_ai.usage.input_tokens"] == sum(s.attributes["gen_ai.usage.input_tokens"]
                                                              for s in answered)
