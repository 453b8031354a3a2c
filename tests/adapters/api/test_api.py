"""The HTTP API against the running hub and the fake LLM: JSON, SSE and callback answers, commands as text,
bad requests, tokens, rate limits and the isolation of one token's chats from another's."""

from __future__ import annotations

import asyncio
import hashlib
import hmac
import itertools
import json
from pathlib import Path

from bot.chats.api_tokens import ApiTokens
from tests.adapters.api.conftest import Api, Receiver, sse_events, start_api
from tests.fakes.openai_api import FakeOpenAI, Hang, Text


async def test_a_message_is_answered_as_json(api: Api, fake: FakeOpenAI) -> None:
    fake.script(Text("Hello **there**, how can I help?"))
    async with await api.post("support-42", {"text": "hi bot"}) as resp:
        assert resp.status == 200 and resp.content_type == "application/json"
        result = await resp.json()
    assert result["conversation_key"] == "support-42" and result["complete"] is True
    assert result["text"] == "Hello **there**, how can I help?"
    assert [(r["text"], r["actions"]) for r in result["replies"]] == [("Hello **there**, how can I help?", [])]
    assert fake.requests[-1]["body"]["messages"][-1]["content"] == "hi bot"
    # the exchange is stored in the chat's conversation tree like any platform's
    token_id = (await ApiTokens(api.app.store.api_tokens, api.app.store.dashboard).list())[0].id
    [info] = await api.app.store.conversations.recent(f"api:{token_id}.support-42", limit=5)
    assert info.message_count == 2
    # the response names the run that wrote the answer: its trace is the dashboard's /trace/<chat>/<id>
    await api.app.traces.drain()
    trace = await api.app.store.traces.get(f"api:{token_id}.support-42", result["trace_id"])
    assert trace is not None and trace.outcome == "ok"


async def test_a_long_message_sent_in_chunks_is_read_whole(api: Api) -> None:
    text = " ".join(f"word{n}" for n in range(3000))  # ~26 KB, in 4 KB pieces

    async def chunks():  # type: ignore[no-untyped-def]
        body = json.dumps({"text": text}).encode()
        for start in range(0, len(body), 4096):
            yield body[start:start + 4096]
            await asyncio.sleep(0)

    async with await api.post("long", chunks()) as resp:  # no Content-Length: Transfer-Encoding chunked
        assert resp.status == 200, await resp.text()
        assert (await resp.json())["text"] == text


async def test_commands_work_as_text_and_buttons_come_back_as_actions(api: Api) -> None:
    first = await api.say("k", "first question")
    assert first["text"] == "first question"
    new = await api.say("k", "/new")
    assert new["complete"] and new["replies"][0]["text"]
    listed = await api.say("k", "/list")
    actions = [a for r in listed["replies"] for a in r["actions"]]
    [switch] = [a["command"] for a in actions if a["command"].startswith("/switch ")]  # not to the current one
    assert all(a["label"] for a in actions) and listed["replies"][0]["monospace"] is True
    # an action is pressed by sending its command back
    assert (await api.say("k", switch))["complete"]
    assert "first question" in (await api.say("k", "/tree"))["text"]


async def test_an_answer_streams_as_server_sent_events(api: Api, fake: FakeOpenAI) -> None:
    fake.script(Text("one two three four five six", chunks=6, delay=0.25))
    headers = {"Accept": "text/event-stream"}
    async with await api.post("streamed", {"text": "count"}, headers=headers) as resp:
        assert resp.status == 200 and resp.content_type == "text/event-stream"
        events = [e async for e in sse_events(resp)]
    names = [name for name, _ in events]
    assert names[-1] == "done" and names.count("reply") >= 2  # the answer grew in several steps
    texts = [str(data["text"]) for name, data in events if name == "reply"]
    assert all(b.startswith(a.rstrip()) for a, b in itertools.pairwise(texts))
    assert texts[-1] == "one two three four five six"
    done = events[-1][1]
    assert done["complete"] is True and done["text"] == "one two three four five six"


async def test_a_callback_gets_the_answer_after_a_202(api: Api, receiver: Receiver) -> None:
    receiver.statuses = [503]  # the first delivery fails: retried
    async with await api.post("hooked", {"text": "call me back", "callback_url": receiver.url}) as resp:
        assert resp.status == 202
        accepted = await resp.json()
    assert accepted["status"] == "accepted" and accepted["conversation_key"] == "hooked"
    await asyncio.wait_for(receiver.arrived.wait(), 10)
    [body] = receiver.bodies
    assert body["message_id"] == accepted["message_id"] and body["complete"] is True
    assert body["text"] == "call me back" and receiver.attempts == 2
    # signed with the token the receiver knows: HMAC-SHA256 keyed with the token's hex SHA-256
    [(signature, raw)] = receiver.signatures
    key = hashlib.sha256(api.token.encode()).hexdigest().encode()
    assert signature == "sha256=" + hmac.new(key, raw, hashlib.sha256).hexdigest()


async def test_a_callback_that_hangs_times_out_and_is_tried_again(api: Api, receiver: Receiver) -> None:
    receiver.stall = 6.0  # past callback_timeout (2 s)
    async with await api.post("slow", {"text": "patience", "callback_url": receiver.url}) as resp:
        assert resp.status == 202
    await asyncio.wait_for(receiver.arrived.wait(), 10)
    assert receiver.attempts == 2 and receiver.bodies[0]["text"] == "patience"


async def test_callbacks_to_internal_addresses_are_refused(api: Api, fake: FakeOpenAI) -> None:
    for url, reason in [("http://169.254.169.254/latest/meta-data/", "a cloud metadata endpoint"),
                        ("http://10.0.0.5/hook", "a private address"),
                        ("http://[::1]:9/hook", "a loopback address"),
                        ("file:///etc/passwd", "only http and https")]:
        async with await api.post("k", {"text": "hi", "callback_url": url}) as resp:
            assert resp.status == 400
            assert reason in (await resp.json())["error"], url
    assert fake.requests == []  # nothing reached the model


async def test_loopback_callbacks_are_refused_unless_allowed(tmp_path: Path, fake: FakeOpenAI,
                                                             receiver: Receiver) -> None:
    async for api in start_api(tmp_path, fake, callback_allow_hosts=[]):
        async with await api.post("k", {"text": "hi", "callback_url": receiver.url}) as resp:
            assert resp.status == 400
            assert (await resp.json())["error"] == "callback_url refused: 127.0.0.1 is a loopback address"
    assert receiver.attempts == 0


async def test_bad_requests_get_a_clear_json_error(api: Api, fake: FakeOpenAI) -> None:
    cases = [
        (b"not json", '{"text": "hello"}'),
        (b"[1, 2]", "JSON object"),
        ({"text": "   "}, '"text" is empty'),
        ({"text": 5}, '"text" must be a string'),
        ({"txt": "hi"}, "unknown field txt"),
        ({"text": "x" * 70_000}, "larger than 64000 bytes"),
        ({"text": "hi", "callback_url": 7}, '"callback_url" must be an http(s) URL'),
    ]
    for body, error in cases:
        async with await api.post("k", body) as resp:
            assert resp.status == 400, body
            assert resp.content_type == "application/json"
            assert error in (await resp.json())["error"]
    async with await api.post("bad key!", {"text": "hi"}) as resp:
        assert resp.status == 400 and "conversation key" in (await resp.json())["error"]
    assert fake.requests == []


async def test_unknown_and_revoked_tokens_get_401(api: Api) -> None:
    for token in ["", "bothub_made-up", "Basic abc"]:
        async with await api.post("k", {"text": "hi"}, token) as resp:
            assert resp.status == 401 and resp.headers["WWW-Authenticate"].startswith("Bearer")
            assert "API token" in (await resp.json())["error"]
    token_id, secret = await api.new_token("soon revoked")
    assert (await api.say("k", "hello", secret))["text"] == "hello"
    assert await ApiTokens(api.app.store.api_tokens, api.app.store.dashboard).revoke(token_id, "tests")
    async with await api.post("k", {"text": "hi"}, secret) as resp:
        assert resp.status == 401


async def test_each_token_has_its_own_rate_limit(tmp_path: Path, fake: FakeOpenAI) -> None:
    async for api in start_api(tmp_path, fake, burst=2, requests_per_minute=30):
        assert (await api.say("k", "one"))["complete"] and (await api.say("k", "two"))["complete"]
        async with await api.post("k", {"text": "three"}) as resp:
            assert resp.status == 429 and resp.headers["Retry-After"] in ("1", "2")  # 0.5/s; exact: test_limits
            assert "too many requests" in (await resp.json())["error"]
        _, other = await api.new_token("another system")
        assert (await api.say("k", "mine", other))["text"] == "mine"


async def test_two_tokens_never_see_each_others_conversations(api: Api, fake: FakeOpenAI) -> None:
    first_id = (await ApiTokens(api.app.store.api_tokens, api.app.store.dashboard).list())[0].id
    _, other = await api.new_token("other system")
    await api.say("shared-key", "the secret of the first token")
    [first_conv] = await api.app.store.conversations.recent(f"api:{first_id}.shared-key", limit=5)
    theirs = await api.say("shared-key", "/list", other)
    assert first_conv.id not in json.dumps(theirs)
    switched = await api.say("shared-key", f"/switch {first_conv.id}", other)
    unknown = await api.say("shared-key", "/switch 0123abcd", other)
    assert switched["text"] == unknown["text"].replace("0123abcd", first_conv.id)  # "not found", the same way
    answer = await api.say("shared-key", "what did they say?", other)
    assert answer["text"] == "what did they say?"
    assert "the secret of the first token" not in json.dumps(fake.requests[-1]["body"]["messages"])
    assert (await api.say("shared-key", "/status"))["text"].count(first_conv.id) == 1  # the first token's own


async def test_a_reply_that_takes_too_long_is_a_504_and_still_lands_in_the_tree(tmp_path: Path,
                                                                                fake: FakeOpenAI) -> None:
    async for api in start_api(tmp_path, fake, reply_timeout=0.5):
        fake.script(Hang(1.5))
        async with await api.post("k", {"text": "slow one"}) as resp:
            assert resp.status == 504
            assert (await resp.json())["complete"] is False
        await api.app.hub.idle()
        token_id = (await ApiTokens(api.app.store.api_tokens, api.app.store.dashboard).list())[0].id
        [info] = await api.app.store.conversations.recent(f"api:{token_id}.k", limit=5)
        assert info.message_count == 2
