"""Slash commands, /switch autocomplete and command buttons, through real interaction round trips."""

from __future__ import annotations

import time

import pytest

from adapters.discord import outbound as outbound_module
from adapters.discord.adapter import DiscordAdapter
from bot.messages import ButtonPress, SentRef
from bot.replies import Button, Reply
from tests.adapters.discord.conftest import Inbox
from tests.fakes.discord_api import APP_ID, CHANNEL_ID, DM_CHANNEL_ID, THREAD_ID, Call, FakeDiscord

WEBHOOK = rf"/webhooks/{APP_ID}/itoken-\d+"


def _callbacks(fake: FakeDiscord) -> list[Call]:
    return fake.calls_to("POST", r"/interactions/\d+/itoken-\d+/callback")


async def test_slash_new_is_deferred_then_answered_through_the_interaction(
        adapter: DiscordAdapter, fake: FakeDiscord, inbox: Inbox) -> None:
    payload = fake.slash("new", {"role": "coder"})
    await fake.dispatch("INTERACTION_CREATE", payload)
    [message] = await inbox.wait()
    assert [c.body["type"] for c in _callbacks(fake)] == [5]  # deferred, "thinking…", before the hub ran
    assert message.text == "/new coder"
    assert message.message_id == f"i:{payload['id']}"
    assert (message.chat_id, message.mentioned, message.is_button) == (CHANNEL_ID, True, False)

    first = await adapter.send(message.chat, Reply("Started a new conversation."))
    second = await adapter.send(message.chat, Reply("(second part)"))
    await adapter.edit(second, Reply("(second part, edited)"), final=True)
    await adapter.edit(first, Reply("Started a new conversation as **coder**."), final=True)

    assert [(c.method, c.path.removeprefix(f"/webhooks/{APP_ID}/")) for c in fake.calls
            if c.path.startswith("/webhooks/")] == [
        ("PATCH", f"{payload['token']}/messages/@original"),
        ("POST", payload["token"]),
        ("PATCH", f"{payload['token']}/messages/{second.message_id}"),
        ("PATCH", f"{payload['token']}/messages/@original"),
    ]
    assert fake.messages[first.message_id]["content"] == "Started a new conversation as **coder**."
    assert fake.messages[second.message_id]["content"] == "(second part, edited)"
    assert not fake.calls_to("POST", r"/channels/\d+/messages")


async def test_new_without_role_and_goto_become_command_text(adapter: DiscordAdapter, fake: FakeDiscord,
                                                             inbox: Inbox) -> None:
    await fake.dispatch("INTERACTION_CREATE", fake.slash("new"))
    await fake.dispatch("INTERACTION_CREATE", fake.slash("goto", {"n": 7}))
    await fake.dispatch("INTERACTION_CREATE", fake.slash("tree"))
    messages = await inbox.wait(3)
    assert sorted(m.text for m in messages) == ["/goto 7", "/new", "/tree"]


async def test_ask_passes_the_prompt_as_a_plain_message(adapter: DiscordAdapter, fake: FakeDiscord,
                                                        inbox: Inbox) -> None:
    await fake.dispatch("INTERACTION_CREATE", fake.slash("ask", {"prompt": "why is the sky blue?"}, dm=True))
    [message] = await inbox.wait()
    assert (message.text, message.chat_id, message.is_group) == ("why is the sky blue?", DM_CHANNEL_ID, False)


async def test_a_group_dm_is_a_group_for_interactions_as_for_messages(adapter: DiscordAdapter, fake: FakeDiscord,
                                                                      inbox: Inbox) -> None:
    await fake.dispatch("INTERACTION_CREATE", fake.slash("status", group_dm=True))
    await fake.dispatch("INTERACTION_CREATE", fake.slash("status", dm=True))
    messages = await inbox.wait(2)
    assert sorted(m.is_group for m in messages) == [False, True]


async def test_slash_command_in_a_thread_belongs_to_the_thread(adapter: DiscordAdapter, fake: FakeDiscord,
                                                               inbox: Inbox) -> None:
    await fake.dispatch("INTERACTION_CREATE", fake.slash("status", channel_id=THREAD_ID))
    [message] = await inbox.wait()
    assert (message.text, message.chat_id, message.thread_id) == ("/status", CHANNEL_ID, THREAD_ID)


async def test_switch_autocomplete_offers_only_this_chats_conversations(adapter: DiscordAdapter,
                                                                       fake: FakeDiscord) -> None:
    await fake.dispatch("INTERACTION_CREATE", fake.autocomplete("switch", "conversation", ""))
    await fake.dispatch("INTERACTION_CREATE", fake.autocomplete("switch", "conversation", "", channel_id=THREAD_ID))
    await fake.dispatch("INTERACTION_CREATE", fake.autocomplete("switch", "conversation", "rec"))
    await fake.wait_for(lambda: len(_callbacks(fake)) == 3)
    answers = {c.path: c.body for c in _callbacks(fake)}
    assert all(body["type"] == 8 for body in answers.values())
    choices = [[(ch["name"], ch["value"]) for ch in body["data"]["choices"]] for body in answers.values()]
    assert sorted(choices) == sorted([
        [("Trip planning · a1b2c3d4", "a1b2c3d4"), ("Recipes · e5f6a7b8", "e5f6a7b8"),
         ("📦 Old notes · 0f0f0f0f", "0f0f0f0f")],
        [("Thread notes · 99887766", "99887766")],
        [("Recipes · e5f6a7b8", "e5f6a7b8")],
    ])


async def test_archive_offers_visible_conversations_and_unarchive_the_archived(adapter: DiscordAdapter,
                                                                              fake: FakeDiscord) -> None:
    await fake.dispatch("INTERACTION_CREATE", fake.autocomplete("archive", "conversation", ""))
    await fake.wait_for(lambda: len(_callbacks(fake)) == 1)
    await fake.dispatch("INTERACTION_CREATE", fake.autocomplete("unarchive", "conversation", ""))
    await fake.wait_for(lambda: len(_callbacks(fake)) == 2)
    archive, unarchive = ([ch["value"] for ch in c.body["data"]["choices"]] for c in _callbacks(fake))
    assert (archive, unarchive) == (["a1b2c3d4", "e5f6a7b8"], ["0f0f0f0f"])


@pytest.mark.parametrize(("name", "options", "text"), [
    ("delete", {"conversation": "a1b2c3d4"}, "/delete a1b2c3d4"),
    ("rename", {"title": "Trip to Rome"}, "/rename Trip to Rome"),
    ("search", {"words": "early train"}, "/search early train"),
    ("list", {"archived": True, "page": 2}, "/list all 2"),
    ("list", {}, "/list"),
    ("undo", {}, "/undo"),
])
async def test_housekeeping_slash_commands_become_command_text(adapter: DiscordAdapter, fake: FakeDiscord,
                                                               inbox: Inbox, name: str, options: dict[str, object],
                                                               text: str) -> None:
    await fake.dispatch("INTERACTION_CREATE", fake.slash(name, options or None))
    [message] = await inbox.wait()
    assert message.text == text


async def test_switch_command_carries_the_chosen_id(adapter: DiscordAdapter, fake: FakeDiscord,
                                                    inbox: Inbox) -> None:
    await fake.dispatch("INTERACTION_CREATE", fake.slash("switch", {"conversation": "a1b2c3d4"}))
    [message] = await inbox.wait()
    assert message.text == "/switch a1b2c3d4"


async def test_button_press_is_a_command_and_updates_its_message_in_place(
        adapter: DiscordAdapter, fake: FakeDiscord, inbox: Inbox) -> None:
    await fake.dispatch("MESSAGE_CREATE", fake.user_message("hi", dm=True))
    [asked] = await inbox.wait()
    tree = Reply("1 user: hi\n2 bot: hello", monospace=True,
                 buttons=((Button("Go to 1", "/goto 1"), Button("Go to 2", "/goto 2")),))
    sent = await adapter.send(asked.chat, tree)
    components = fake.messages[sent.message_id]["components"]
    assert [b["custom_id"] for b in components[0]["components"]] == ["/goto 1", "/goto 2"]

    press = fake.button_press(sent.message_id, "/goto 1")
    await fake.dispatch("INTERACTION_CREATE", press)
    _, pressed = await inbox.wait(2)
    assert (pressed.text, pressed.is_button, pressed.mentioned) == ("/goto 1", True, True)
    assert pressed.message_id == f"i:{press['id']}"
    assert [c.body["type"] for c in _callbacks(fake)] == [6]  # deferred update: acknowledged, no new message

    assert pressed.origin == ButtonPress(press["id"], sent.message_id)
    moved = Reply("1 user: hi  ← cursor\n2 bot: hello", monospace=True, buttons=tree.buttons)
    await adapter.edit(SentRef(pressed.chat, sent.message_id), moved, final=True)  # the hub replaces it
    assert fake.messages[sent.message_id]["content"].startswith("```\n1 user: hi  ← cursor")
    assert len(fake.calls_to("PATCH", r"/webhooks/.+/messages/@original")) == 1  # through the interaction
    assert len(fake.calls_to("POST", r"/channels/\d+/messages")) == 1  # nothing new was posted
    await adapter.send(pressed.chat, Reply("and a second reply"))
    assert len(fake.calls_to("POST", r"/webhooks/[^/]+/[^/]+")) == 1  # a followup, not another replacement


async def test_a_redelivered_interaction_is_still_handed_over_once_acknowledged(
        adapter: DiscordAdapter, fake: FakeDiscord, inbox: Inbox) -> None:
    """Discord answers 40060 to a second acknowledgement; the hub's dedupe on message_id drops it."""
    payload = fake.slash("help")
    await fake.dispatch("INTERACTION_CREATE", payload)
    await fake.dispatch("INTERACTION_CREATE", payload)
    first, again = await inbox.wait(2)
    assert first.message_id == again.message_id == f"i:{payload['id']}"
    assert len(_callbacks(fake)) == 2


async def test_near_the_15_minute_limit_replies_continue_as_channel_messages(
        adapter: DiscordAdapter, fake: FakeDiscord, inbox: Inbox, monkeypatch: pytest.MonkeyPatch) -> None:
    await fake.dispatch("INTERACTION_CREATE", fake.slash("ask", {"prompt": "long job"}))
    [message] = await inbox.wait()
    streaming = await adapter.send(message.chat, Reply("Working"))
    monkeypatch.setattr(outbound_module, "TOKEN_MARGIN", 16 * 60.0)  # from now on every token is about to expire

    await adapter.edit(streaming, Reply("Working, still"), final=True)
    await adapter.edit(streaming, Reply("Done."), final=True)
    tail = await adapter.send(message.chat, Reply("One more thing."))

    [moved] = fake.calls_to("POST", rf"/channels/{CHANNEL_ID}/messages")[:1]
    continued = [m for m in fake.messages.values() if m["content"] == "Done."]
    assert moved.body["content"] == "Working, still"
    assert len(continued) == 1 and continued[0]["id"] != streaming.message_id
    assert fake.calls_to("PATCH", rf"/channels/{CHANNEL_ID}/messages/{continued[0]['id']}")
    assert fake.messages[tail.message_id]["channel_id"] == CHANNEL_ID
    assert fake.messages[streaming.message_id]["content"] == "Working"
    assert len(fake.calls_to("PATCH", WEBHOOK + "/messages/@original")) == 1


async def test_an_interaction_older_than_the_margin_is_answered_in_the_channel(
        adapter: DiscordAdapter, fake: FakeDiscord, inbox: Inbox) -> None:
    await fake.dispatch("INTERACTION_CREATE", fake.slash("ask", {"prompt": "old"}, age=14.5 * 60))
    [late] = await inbox.wait()
    ref = await adapter.send(late.chat, Reply("answer to an old command"))
    assert fake.messages[ref.message_id]["channel_id"] == CHANNEL_ID
    assert not [c for c in fake.calls if c.path.startswith("/webhooks/")]


async def test_acknowledgements_arrive_inside_discords_three_seconds(
        adapter: DiscordAdapter, fake: FakeDiscord, inbox: Inbox) -> None:
    await fake.dispatch("INTERACTION_CREATE", fake.slash("status"))
    await inbox.wait()
    assert [c.body["type"] for c in _callbacks(fake)] == [5] and fake.expired == []


async def test_an_acknowledgement_after_three_and_a_half_seconds_fails_the_interaction(
        adapter: DiscordAdapter, fake: FakeDiscord, inbox: Inbox, monkeypatch: pytest.MonkeyPatch,
        caplog: pytest.LogCaptureFixture) -> None:
    """Mutation: the adapter acknowledges 3.5 s after the command (the fake's clock jumps as it does)."""
    acknowledge = DiscordAdapter._acknowledge

    async def late(self: DiscordAdapter, interaction: object, *, thinking: bool) -> None:
        fake.clock = lambda: time.time() + 3.5
        await acknowledge(self, interaction, thinking=thinking)  # type: ignore[arg-type]

    monkeypatch.setattr(DiscordAdapter, "_acknowledge", late)
    payload = fake.slash("status")
    await fake.dispatch("INTERACTION_CREATE", payload)
    await inbox.wait()
    assert fake.expired == [payload["id"]]  # Discord shows the user "This interaction failed"
    assert f"could not acknowledge interaction {payload['id']}" in caplog.text
