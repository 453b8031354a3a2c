"""Malformed and odd input never crashes anything and never gets a reply it is not due.

Seeded generators: a failure names the seed and the event, so it can be replayed exactly.
"""

from __future__ import annotations

import asyncio
import copy
import json
import logging
import random
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from adapters.dingtalk import inbound as dingtalk_inbound
from adapters.discord import inbound as discord_inbound
from adapters.feishu import inbound as feishu_inbound
from adapters.telegram import inbound as telegram_inbound
from adapters.wecom import inbound as wecom_inbound
from bot.messages import Attachment, IncomingMessage
from tests.fakes.openai_api import FakeOpenAI
from tests.harness import RecordingAdapter, answered_id, running_app

SEED = 20240607
_LONE_SURROGATE = re.compile("[\ud800-\udfff]")
ODD_PIECES = (
    "", " ", "\n\t ", "\u200b", "\u200b\u200c\u200d\ufeff", "\u202e\u05e9\u05dc\u05d5\u05dd\u202c", "\u200fمرحبا",
    "🙂", "👨‍👩‍👧‍👦🏳️‍🌈", "\x00", "a\x00b", "\x1b[31mred", "\ud800", "\udfff x", "e\u0301\u0301\u0301", "𝕳𝖊𝖑𝖑𝖔",
    "<b>bold</b>", "**md** `code` ```", "@bot", "<@123>", "@_user_1", "%s %d {0} {name}", "' OR 1=1; --",
)
COMMAND_JUNK = ("/", "//", "/goto", "/goto \u202e1", "/goto -1", "/goto 99999999999999999999", "/switch \x00",
                "/switch 🙂", "/lang 🙂", "/list -5", "/tree", "/status", "/help", "/pair approve 💥",
                "/model \u200b", "/retry", "/new \x00", "/role ../../etc")


def odd_text(rng: random.Random, *, surrogates: bool = True) -> str:
    """Odd text; platforms send valid UTF-8, so parsers get `surrogates=False` (the hub gets everything)."""
    if not surrogates:
        return _LONE_SURROGATE.sub("\ufffd", odd_text(rng))
    kind = rng.random()
    if kind < 0.15:
        return rng.choice(COMMAND_JUNK)
    if kind < 0.30:
        return "".join(chr(rng.randrange(0, 0x30000)) for _ in range(rng.randrange(1, 40)))
    if kind < 0.302:
        return "x" * 1_000_000  # 1 MB without a single space
    return " ".join(rng.choice(ODD_PIECES) for _ in range(rng.randrange(1, 8)))


def odd_id(rng: random.Random) -> str:
    return rng.choice(("", "0", "-1", "\u202e42", "🙂", "a" * 300, "x\x00y", str(rng.randrange(10**12))))


async def test_hub_survives_a_thousand_odd_events(tmp_path: Path, fake: FakeOpenAI,
                                                  caplog: pytest.LogCaptureFixture) -> None:
    rng = random.Random(SEED)
    rec = RecordingAdapter()
    events: list[IncomingMessage] = []
    for n in range(1200):
        group = rng.random() < 0.5
        message_id = f"m{n}" if rng.random() > 0.05 or not events else events[-1].message_id  # redeliveries
        events.append(IncomingMessage(
            platform="recording", chat_id=f"chat{rng.randrange(40)}{odd_id(rng) if rng.random() < 0.1 else ''}",
            thread_id=rng.choice((None, None, None, "t1", odd_id(rng))), message_id=message_id,
            user_id=odd_id(rng), user_name=odd_text(rng)[:64], is_group=group,
            mentioned=not group or rng.random() < 0.3, text=odd_text(rng),
            attachments=(Attachment(rng.choice(("photo", "??", "")), odd_id(rng)),) if rng.random() < 0.1 else ()))
    caplog.set_level(logging.WARNING)
    async with running_app(tmp_path, fake.base_url, adapters=(rec,), config={"max_queue": 1000}) as app:
        assert rec.on_message is not None
        for event in events:
            await rec.on_message(event)
        await asyncio.wait_for(app.hub.idle(), 50)

    handled: set[tuple[str, str | None, str]] = set()
    due: set[str] = set()
    for event in events:
        place = (event.chat_id, event.thread_id, event.message_id)
        if place in handled:
            continue  # a redelivery: answered once already (or rightly ignored)
        handled.add(place)
        if (not event.is_group or event.mentioned) and (event.text.strip() or event.attachments):
            due.add(event.message_id)
    answered = {answered_id(chat) for chat, _ in rec.sent}
    assert answered <= due, f"replies where none was due: {sorted(answered - due)[:5]} (seed {SEED})"
    missing = due - answered
    assert not missing, f"due events got no reply: {sorted(missing)[:5]} (seed {SEED})"
    assert not any("went wrong" in reply.text for _, reply in rec.sent)
    errors = [r for r in caplog.records if r.levelno >= logging.ERROR]
    assert not errors, f"{errors[0].getMessage()} (seed {SEED})"


# ---- platform parsers: whatever the SDK accepts, our parser turns into a message or None ----------

# fields the Bot API / Discord API documents as always present (Feishu's parser checks every field itself)
TELEGRAM_REQUIRED = frozenset({"update_id", "message_id", "date", "chat", "id", "type", "is_bot", "first_name",
                               "from", "chat_instance", "file_id", "file_unique_id", "width", "height", "offset",
                               "length"})
DISCORD_REQUIRED = frozenset({"id", "channel_id", "author", "content", "timestamp", "type", "mentions",
                              "attachments", "embeds", "username", "discriminator", "avatar", "global_name", "filename",
                              "size", "url"})

def mutate(rng: random.Random, value: Any, required: frozenset[str], key: str = "") -> Any:
    """Randomly drop keys, add unknown ones and fill strings and numbers with odd values, recursively.

    Types stay as documented (SDK models do not check leaf types, and platforms do not send a number
    where a string is documented); keys documented as always present (`required`) are never dropped.
    """
    if isinstance(value, dict):
        out = {k: mutate(rng, v, required, k) for k, v in value.items() if k in required or rng.random() > 0.1}
        if rng.random() < 0.05:
            out[odd_id(rng) or "k"] = odd_text(rng)[:100]
        return out
    if isinstance(value, list):
        return [mutate(rng, item, required, key) for item in value if rng.random() > 0.1]
    roll = rng.random()
    if isinstance(value, str) and roll < 0.4:
        return odd_text(rng, surrogates=False)[:2000]
    if isinstance(value, int) and not isinstance(value, bool) and roll < 0.2:
        return rng.choice((0, -1, 2**53, -(2**40)))
    return value


def fuzz_parser(build: Callable[[dict[str, Any]], Any], parse: Callable[[Any], Any], templates: list[dict[str, Any]],
                required: frozenset[str] = frozenset(), rounds: int = 1000) -> int:
    """Feed mutated templates through the SDK's own model builder, then our parser. Returns how many parsed."""
    rng = random.Random(SEED)
    parsed = 0
    for n in range(rounds):
        data = mutate(rng, copy.deepcopy(templates[n % len(templates)]), required)
        try:
            obj = build(data)
        except Exception:
            continue  # the SDK refuses it before our code runs (and the adapter skips it)
        try:
            result = parse(obj)
        except Exception as e:
            raise AssertionError(f"parser raised {e!r} on round {n} (seed {SEED}): {json.dumps(data)[:500]}") from e
        if result is not None:
            parsed += 1
    return parsed


def test_telegram_parser_fuzz() -> None:
    from telegram import Bot, Update

    bot = Bot("123456:TEST-TOKEN")
    me = telegram_inbound.BotIdentity(1, "hubbot")
    user = {"id": 7, "is_bot": False, "first_name": "Ann", "username": "ann"}
    group = {"id": -100123, "type": "supergroup", "title": "G", "is_forum": True}
    templates = [
        {"update_id": 1, "message": {"message_id": 5, "date": 1700000000, "chat": {"id": 7, "type": "private"},
                                     "from": user, "text": "hi"}},
        {"update_id": 2, "message": {"message_id": 6, "date": 1700000000, "chat": group, "from": user,
                                     "text": "@hubbot /goto 3", "message_thread_id": 9, "is_topic_message": True,
                                     "entities": [{"type": "mention", "offset": 0, "length": 7},
                                                  {"type": "bot_command", "offset": 8, "length": 5}],
                                     "reply_to_message": {"message_id": 4, "date": 1700000000, "chat": group,
                                                          "from": {"id": 1, "is_bot": True, "first_name": "B"},
                                                          "text": "earlier"}}},
        {"update_id": 3, "message": {"message_id": 7, "date": 1700000000, "chat": group, "from": user,
                                     "caption": "look", "photo": [{"file_id": "f", "file_unique_id": "u",
                                                                    "width": 1, "height": 1}]}},
        {"update_id": 4, "callback_query": {"id": "q1", "from": user, "chat_instance": "ci", "data": "/goto 2",
                                            "message": {"message_id": 8, "date": 1700000000, "chat": group,
                                                        "text": "tree"}}},
    ]
    parsed = fuzz_parser(lambda d: Update.de_json(d, bot), lambda u: telegram_inbound.parse_update(u, me), templates,
                         TELEGRAM_REQUIRED)
    assert parsed > 100  # the fuzzing reached the parser's interesting paths, not just the SDK's refusals


def test_discord_parser_fuzz() -> None:
    import discord

    from tests.fakes.discord_api import APP_ID, BOT_USER, CHANNEL_ID, DM_CHANNEL_ID, GUILD_ID, HUMAN, FakeDiscord

    state = discord.Client(intents=discord.Intents.default())._connection
    state.user = discord.ClientUser(state=state, data=BOT_USER)  # type: ignore[arg-type]
    guild = discord.Guild(data={"id": GUILD_ID, "name": "g"}, state=state)  # type: ignore[typeddict-item]
    channel = discord.TextChannel(state=state, guild=guild,
                                  data={"id": CHANNEL_ID, "type": 0, "name": "c", "position": 0})  # type: ignore
    dm = discord.DMChannel(me=state.user, state=state,
                           data={"id": DM_CHANNEL_ID, "type": 1, "recipients": [HUMAN]})  # type: ignore
    fake = FakeDiscord()
    ping = f"<@{APP_ID}> hello <@!{APP_ID}> <@700000000000000002>"
    templates = [
        fake.user_message(ping, mentions=(BOT_USER,)),
        fake.user_message("hi there", dm=True),
        fake.user_message("re", referenced=fake.user_message("mine", author=BOT_USER)),
        fake.user_message("file", dm=True, attachments=[{"id": "1", "filename": "a.png", "size": 1, "url": "u",
                                                         "proxy_url": "u", "content_type": "image/png"}]),
    ]

    def build(data: dict[str, Any]) -> Any:
        return discord.Message(state=state, channel=dm if "guild_id" not in data else channel, data=data)

    parsed = fuzz_parser(build, lambda m: discord_inbound.parse_message(m, int(APP_ID)), templates, DISCORD_REQUIRED)
    assert parsed > 100


def test_feishu_parser_fuzz() -> None:
    """Feishu events reach the parser as decoded JSON (no SDK models), so every field may have any type."""

    def decoded(data: dict[str, Any]) -> Any:
        return json.loads(json.dumps(data))

    def event(message: dict[str, Any]) -> dict[str, Any]:
        return {"schema": "2.0", "header": {"event_id": "e1", "event_type": "im.message.receive_v1"},
                "event": {"sender": {"sender_id": {"open_id": "ou_1"}, "sender_type": "user"}, "message": message}}

    base = {"message_id": "om_1", "chat_id": "oc_1", "chat_type": "group"}
    templates = [
        event({**base, "chat_type": "p2p", "message_type": "text", "content": json.dumps({"text": "hi"})}),
        event({**base, "message_type": "text", "content": json.dumps({"text": "@_user_1 hi @_user_10"}),
               "mentions": [{"key": "@_user_1", "id": {"open_id": "ou_bot"}, "name": "Bot"},
                            {"key": "@_user_10", "id": {"open_id": "ou_2"}, "name": "Ann"}]}),
        event({**base, "message_type": "post", "content": json.dumps(
            {"title": "T", "content": [[{"tag": "text", "text": "a"}, {"tag": "code_block", "text": "x"}]]})}),
        event({**base, "message_type": "file", "content": json.dumps({"file_name": "a.pdf"})}),
    ]
    parsed = fuzz_parser(decoded, lambda e: feishu_inbound.parse_message(e, "ou_bot"), templates)
    assert parsed > 100
    card = {"schema": "2.0", "header": {"event_id": "e2", "event_type": "card.action.trigger"},
            "event": {"operator": {"open_id": "ou_1"}, "action": {"value": {"action": "/goto 2"}, "tag": "button"},
                      "context": {"open_chat_id": "oc_1", "open_message_id": "om_2"}}}
    pressed = fuzz_parser(decoded, feishu_inbound.parse_card_action, [card])
    assert pressed > 100


def test_dingtalk_parser_fuzz() -> None:
    """DingTalk frames' data reaches the parser as decoded JSON, so every field may have any type."""

    def decoded(data: dict[str, Any]) -> Any:
        return json.loads(json.dumps(data))

    base = {"msgId": "m1", "conversationId": "cid1", "conversationType": "2", "senderStaffId": "s1",
            "senderNick": "Ann", "sessionWebhook": "http://127.0.0.1:1/s", "sessionWebhookExpiredTime": 1}
    templates = [
        {**base, "conversationType": "1", "msgtype": "text", "text": {"content": "hi"}},
        {**base, "msgtype": "richText",
         "content": {"richText": [{"text": "a"}, {"downloadCode": "d", "type": "picture"}]}},
        {**base, "msgtype": "audio", "content": {"downloadCode": "d", "recognition": "你好"}},
        {**base, "msgtype": "file", "content": {"downloadCode": "d", "fileName": "a.pdf", "fileSize": 3}},
        {**base, "msgtype": "chatRecord", "content": {}},
    ]
    assert fuzz_parser(decoded, dingtalk_inbound.parse_robot, templates) > 100
    press = {"outTrackId": "t1", "userId": "s1", "spaceType": "IM_GROUP", "spaceId": "cid1",
             "content": json.dumps({"cardPrivateData": {"actionIds": ["/goto 2"], "params": {}}})}
    assert fuzz_parser(decoded, dingtalk_inbound.parse_card_callback, [press]) > 100


def test_wecom_parser_fuzz() -> None:
    """WeCom frame bodies reach the parser as decoded JSON, so every field may have any type."""

    def decoded(data: dict[str, Any]) -> Any:
        return json.loads(json.dumps(data))

    base = {"msgid": "m1", "aibotid": "b1", "chatid": "g1", "chattype": "group", "from": {"userid": "u1"}}
    image = {"url": "http://127.0.0.1:1/m", "aeskey": "k"}
    templates = [
        {**base, "chattype": "single", "msgtype": "text", "text": {"content": "hi"}},
        {**base, "msgtype": "text", "text": {"content": "@bot hi"}},
        {**base, "msgtype": "voice", "voice": {"content": "你好"}},
        {**base, "msgtype": "image", "image": image},
        {**base, "msgtype": "mixed", "mixed": {"msg_item": [{"msgtype": "text", "text": {"content": "a"}},
                                                            {"msgtype": "image", "image": image}]}},
        {**base, "msgtype": "file", "file": image},
    ]
    assert fuzz_parser(decoded, wecom_inbound.parse_message, templates) > 100
    press = {**base, "msgtype": "event", "event": {"eventtype": "template_card_event", "template_card_event": {
        "card_type": "button_interaction", "event_key": "/goto 2", "task_id": "t1"}}}
    assert fuzz_parser(decoded, wecom_inbound.parse_event, [press]) > 100
