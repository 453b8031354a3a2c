"""Slack payloads parsed once at the edge: who is addressed, which session, what the text reads."""

from __future__ import annotations

from typing import Any

import pytest

from adapters.slack.inbound import AssistantThread, command_text, parse_action, parse_event, plain
from bot.messages import AttachmentKind, IncomingMessage, Overheard

BOT, BOT_ID = "U0BOT", "B0BOT"


def event(**fields: Any) -> dict[str, Any]:
    return {"type": "message", "channel": "D0ANN", "channel_type": "im", "user": "U0ANN", "text": "hi",
            "ts": "1.000100"} | fields


@pytest.mark.parametrize("odd", [
    event(subtype="message_changed"), event(subtype="channel_join"), event(bot_id="B0OTHER"), event(user=BOT),
    event(user=None), event(channel_type="channel", channel="C0GEN", text=f"<@{BOT}> hi"),  # app_mention answers it
    event(channel_type="channel", channel="C0GEN", text=""), {"type": "reaction_added"},
])
def test_what_is_not_talk_to_the_bot_is_never_handed_over(odd: dict[str, Any]) -> None:
    assert parse_event(odd, BOT, BOT_ID) is None


def test_a_thread_reply_is_a_session_of_its_own() -> None:
    mention = event(thread_ts="1.000001", channel="C0GEN", type="app_mention", text=f"<@{BOT}> go")
    del mention["channel_type"]  # app_mention events carry none
    message = parse_event(mention, BOT, BOT_ID)
    assert isinstance(message, IncomingMessage)
    assert (message.chat_id, message.thread_id, message.is_group, message.text) == ("C0GEN", "1.000001", True, "go")


def test_channel_talk_is_overheard_with_its_files_named() -> None:
    files = [{"id": "F1", "name": "a.png", "mimetype": "image/png", "size": 10},
             {"id": "F2", "name": "v.m4a", "mimetype": "audio/mp4", "subtype": "slack_audio"},
             {"id": "F3", "mode": "tombstone"}]
    heard = parse_event(event(channel="C0GEN", channel_type="channel", subtype="file_share", files=files),
                        BOT, BOT_ID)
    assert isinstance(heard, Overheard)
    assert [(a.kind, a.handle) for a in heard.attachments] == [
        (AttachmentKind.IMAGE, "F1"), (AttachmentKind.AUDIO, "F2")]


def test_the_assistant_pane_opening_is_its_own_kind() -> None:
    opened = {"type": "assistant_thread_started", "assistant_thread": {"channel_id": "D0ANN", "thread_ts": "2.0"}}
    assert parse_event(opened, BOT, BOT_ID) == AssistantThread("D0ANN", "2.0")


def test_slack_markup_reads_as_a_person_sees_it() -> None:
    assert plain(f"<@{BOT}> see <https://e.org|the page>, <#C1|general>, <@U2> &amp; <!here> &lt;b&gt;", BOT) == (
        "see the page, #general, @U2 & @here <b>")


@pytest.mark.parametrize(("command", "text", "expected"), [
    ("/bothub", "tree", "/tree"), ("/bothub", "  goto 3 ", "/goto 3"), ("/bothub", "", "/help"),
    ("/bothub", "/list all", "/list all"), ("/tree", "", "/tree"), ("/goto", "7", "/goto 7"),
])
def test_slash_commands_become_command_text(command: str, text: str, expected: str) -> None:
    assert command_text(command, text, "bothub") == expected


def test_a_press_on_something_else_than_our_command_buttons_is_ignored() -> None:
    press = {"type": "block_actions", "user": {"id": "U0ANN"}, "channel": {"id": "D0ANN"},
             "actions": [{"value": "https://e.org"}]}
    assert parse_action(press) is None
    assert parse_action({"type": "view_submission"}) is None
