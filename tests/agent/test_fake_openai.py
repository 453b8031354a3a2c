"""FakeOpenAI itself, driven by the raw openai SDK: the behaviours other suites and benchmarks rely on."""

from __future__ import annotations

import asyncio
import sys
import time
from collections.abc import AsyncIterator
from pathlib import Path

import aiohttp
import openai
import pytest
import pytest_asyncio

from tests.fakes.openai_api import FakeOpenAI, Text, ToolCalls

REPO = Path(__file__).resolve().parents[2]
HELLO = [{"role": "user", "content": "hello big world"}]


@pytest_asyncio.fixture
async def client(fake: FakeOpenAI) -> AsyncIterator[openai.AsyncOpenAI]:
    sdk = openai.AsyncOpenAI(api_key="test-key", base_url=fake.base_url, max_retries=0, timeout=10)
    yield sdk
    await sdk.close()


async def test_non_streaming_completion(fake: FakeOpenAI, client: openai.AsyncOpenAI) -> None:
    fake.script(Text("plain answer"), ToolCalls([("call_1", "read_file", '{"filepath": "a"}')]))
    answer = await client.chat.completions.create(model="m", messages=HELLO)
    assert answer.choices[0].message.content == "plain answer"
    assert answer.usage is not None and answer.usage.total_tokens > 0

    tools = await client.chat.completions.create(model="m", messages=HELLO)
    assert tools.choices[0].finish_reason == "tool_calls"
    tool_calls = tools.choices[0].message.tool_calls or []
    assert [(c.id, c.function.name, c.function.arguments) for c in tool_calls] == [  # type: ignore[union-attr]
        ("call_1", "read_file", '{"filepath": "a"}')]


async def test_default_responder_echoes_word_by_word_with_delays(client: openai.AsyncOpenAI) -> None:
    slow = FakeOpenAI(words_delay=0.05, first_token_delay=0.2)
    await slow.start()
    sdk = client.with_options(base_url=slow.base_url)
    try:
        started = time.monotonic()
        stream = await sdk.chat.completions.create(model="m", messages=HELLO, stream=True)
        arrivals: list[tuple[float, str]] = []
        async for chunk in stream:
            if chunk.choices and chunk.choices[0].delta.content:
                arrivals.append((time.monotonic() - started, chunk.choices[0].delta.content))
    finally:
        await slow.stop()
    assert [word for _, word in arrivals] == ["hello ", "big ", "world"]
    assert arrivals[0][0] >= 0.2
    assert arrivals[-1][0] >= 0.29  # after the first delay and two gaps of 0.05 s (the first word may arrive late)


async def test_stream_without_usage_option_has_no_usage_chunk(
    fake: FakeOpenAI, client: openai.AsyncOpenAI
) -> None:
    fake.script(Text("abcdefgh", chunks=4))
    stream = await client.chat.completions.create(model="m", messages=HELLO, stream=True)
    chunks = [chunk async for chunk in stream]
    assert [c.choices[0].delta.content for c in chunks[1:-1]] == ["ab", "cd", "ef", "gh"]
    assert chunks[-1].choices[0].finish_reason == "stop"
    assert all(c.usage is None for c in chunks)


@pytest.mark.parametrize(("messages", "param"), [
    ([{"role": "tool", "tool_call_id": "call_x", "content": "orphan result"}], "messages.[0].role"),
    ([{"role": "user", "content": "hi"},
      {"role": "assistant", "content": None, "tool_calls": [
          {"id": "call_1", "type": "function", "function": {"name": "f", "arguments": "{}"}}]},
      {"role": "user", "content": "result never sent"}], "messages.[2].role"),
    ([{"role": "assistant", "content": None, "tool_calls": [
        {"id": "call_1", "type": "function", "function": {"name": "read file", "arguments": "{}"}}]},
      {"role": "tool", "tool_call_id": "call_1", "content": "x"}], "messages[0].tool_calls[0].function.name"),
], ids=["orphan-result", "missing-result", "bad-name-in-history"])
async def test_rejects_message_lists_the_real_api_rejects(
    fake: FakeOpenAI, client: openai.AsyncOpenAI, messages: list[dict[str, object]], param: str
) -> None:
    with pytest.raises(openai.BadRequestError) as caught:
        await client.chat.completions.create(model="m", messages=messages, stream=True)  # type: ignore[arg-type]
    assert caught.value.param == param
    assert fake.pending == 0 and len(fake.requests) == 1


def function_tool(name: str, parameters: object = None) -> dict[str, object]:
    function: dict[str, object] = {"name": name, "description": "d"}
    if parameters is not None:
        function["parameters"] = parameters
    return {"type": "function", "function": function}


GOOD_TOOL = function_tool("read_file", {"type": "object", "properties": {"path": {"type": "string"}}})


@pytest.mark.parametrize(("tool", "param", "code"), [
    (function_tool("web.fetch"), "tools[1].function.name", "invalid_value"),
    (function_tool("read file"), "tools[1].function.name", "invalid_value"),
    (function_tool(""), "tools[1].function.name", "invalid_value"),
    (function_tool("x" * 65), "tools[1].function.name", "string_above_max_length"),
    (function_tool("ok", {"type": "string"}), "tools[1].function.parameters", "invalid_function_parameters"),
    (function_tool("ok", ["not", "a", "schema"]), "tools[1].function.parameters", "invalid_function_parameters"),
    ({"type": "function"}, "tools[1].function", "missing_required_parameter"),
], ids=["dot", "space", "empty", "65-chars", "string-schema", "list-schema", "no-function"])
async def test_rejects_tools_the_real_api_rejects(
    fake: FakeOpenAI, client: openai.AsyncOpenAI, tool: dict[str, object], param: str, code: str
) -> None:
    fake.script(Text("never served"))
    with pytest.raises(openai.BadRequestError) as caught:
        await client.chat.completions.create(model="m", messages=HELLO, tools=[GOOD_TOOL, tool])  # type: ignore
    assert (caught.value.status_code, caught.value.param, caught.value.code) == (400, param, code)
    assert fake.pending == 1  # refused before the script


async def test_accepts_the_longest_legal_tool_name_and_a_tool_without_parameters(
    fake: FakeOpenAI, client: openai.AsyncOpenAI
) -> None:
    fake.script(Text("fine"))
    tools = [function_tool("a-Z_9" + "x" * 59), function_tool("no_params")]
    answer = await client.chat.completions.create(model="m", messages=HELLO, tools=tools)  # type: ignore
    assert answer.choices[0].message.content == "fine"
    assert fake.refusals == []


async def test_wrong_or_missing_api_key_is_refused_with_401(fake: FakeOpenAI, client: openai.AsyncOpenAI) -> None:
    wrong = client.with_options(api_key="sk-wrong-key-0123")
    with pytest.raises(openai.AuthenticationError) as caught:
        await wrong.chat.completions.create(model="m", messages=HELLO)
    assert caught.value.code == "invalid_api_key"
    assert caught.value.message.startswith("Error code: 401 - ") and "sk-wrong-key-0123" not in caught.value.message
    with pytest.raises(openai.AuthenticationError):
        await wrong.models.list()
    async with aiohttp.ClientSession() as http:
        bare = await http.post(f"{fake.base_url}/chat/completions", json={"model": "m", "messages": HELLO})
        assert bare.status == 401
        assert (await bare.json())["error"]["message"].startswith("You didn't provide an API key.")
    assert [r.status for r in fake.refusals] == [401, 401]


async def test_models_endpoint(client: openai.AsyncOpenAI) -> None:
    models = [m.id async for m in client.models.list()]
    assert models == ["fake-model"]


async def test_cli_runner_serves_the_echo_responder() -> None:
    proc = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "tests.fakes.openai_api", "--port", "0", "--words-delay", "0.01",
        cwd=REPO, stdout=asyncio.subprocess.PIPE)
    try:
        assert proc.stdout is not None
        base_url = (await asyncio.wait_for(proc.stdout.readline(), 15)).decode().strip()
        assert base_url.startswith("http://127.0.0.1:") and base_url.endswith("/v1")
        sdk = openai.AsyncOpenAI(api_key="test-key", base_url=base_url, max_retries=0, timeout=10)
        answer = await sdk.chat.completions.create(model="m", messages=HELLO)
        await sdk.close()
        assert answer.choices[0].message.content == "hello big world"
    finally:
        proc.terminate()
        assert await asyncio.wait_for(proc.wait(), 10) == 0
