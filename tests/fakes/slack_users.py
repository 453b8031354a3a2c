"""People on the fake Slack: what they do (write, mention the app, run a slash command, press a button, open
the assistant pane) becomes the event Slack would send, pushed over Socket Mode as an envelope."""

from __future__ import annotations

from typing import Any

from tests.fakes.slack_api import FakeSlack
from tests.fakes.slack_events import event_callback
from tests.fakes.slack_rules import MAIN_APP, TEAM_ID, SlackApp
from tests.fakes.slack_socket import Envelope

ANN = "U0ANN"
KINDS = {"D": "im", "C": "channel", "G": "group"}


def message_event(fake: FakeSlack, channel: str, text: str, *, user: str = ANN, thread_ts: str | None = None,
                  mention: bool = False, files: tuple[dict[str, Any], ...] = (), app: SlackApp = MAIN_APP
                  ) -> dict[str, Any]:
    """The person's message, posted in the fake; its event (app_mention of `app` if `mention`). Like Slack, the
    text arrives with `&`, `<` and `>` escaped: a bare `<…>` is Slack's own markup (a mention, a link)."""
    kind = KINDS[channel[0]]
    fake.open_channel(channel, kind)
    text = text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
    if mention:
        text = f"<@{app.bot_user}> {text}"
    ts = fake.user_message(channel, text, user, thread_ts)
    event: dict[str, Any] = {"type": "app_mention" if mention else "message", "channel": channel, "user": user,
                             "text": text, "ts": ts, "team": TEAM_ID, "event_ts": ts}
    if not mention:
        event["channel_type"] = kind
    if thread_ts:
        event["thread_ts"] = thread_ts
    if files:
        event.update(subtype="file_share", files=list(files))
    return event


async def say(fake: FakeSlack, channel: str, text: str, *, app: SlackApp = MAIN_APP, **options: Any) -> Envelope:
    """The message's event, to `app` over its socket."""
    event = message_event(fake, channel, text, app=app, **options)
    return await fake.push("events_api", event_callback(event, app_id=app.app_id), app)


def command_form(fake: FakeSlack, channel: str, text: str, *, name: str = "/bothub", user: str = ANN,
                 app: SlackApp = MAIN_APP, invited: bool = True) -> dict[str, str]:
    """A slash command as Slack sends it (Socket Mode envelope payload, or the Events API's form); a command may
    be run in a channel the app was never invited to (`invited=False`)."""
    if invited:
        fake.open_channel(channel, KINDS[channel[0]])
    return {"team_id": TEAM_ID, "channel_id": channel, "user_id": user, "user_name": "ann", "command": name,
            "text": text, "trigger_id": f"trigger-{len(fake.envelopes)}-{len(fake.hooks)}",
            "response_url": fake.response_url(channel, app)}


async def command(fake: FakeSlack, channel: str, text: str, *, name: str = "/bothub", user: str = ANN,
                  app: SlackApp = MAIN_APP, invited: bool = True) -> Envelope:
    form = command_form(fake, channel, text, name=name, user=user, app=app, invited=invited)
    return await fake.push("slash_commands", form, app)


async def press(fake: FakeSlack, channel: str, message_ts: str, value: str, *, user: str = ANN) -> Envelope:
    posted = fake.message(channel, message_ts)
    payload = {"type": "block_actions", "user": {"id": user, "username": "ann"}, "team": {"id": TEAM_ID},
               "channel": {"id": channel}, "trigger_id": f"trigger-{len(fake.envelopes)}",
               "response_url": fake.response_url(channel, original=message_ts),
               "container": {"type": "message", "message_ts": message_ts, "channel_id": channel,
                             **({"thread_ts": posted.thread_ts} if posted.thread_ts else {})},
               "message": {"ts": message_ts, "text": posted.text},
               "actions": [{"action_id": "bothub-0-0", "type": "button", "value": value,
                            "action_ts": f"1700009999.{len(fake.envelopes):06d}"}]}
    return await fake.push("interactive", payload)


def feedback_of(fake: FakeSlack, channel: str, ts: str) -> dict[str, Any]:
    """The feedback_buttons element under the app's message (its context_actions block); fails if it has none."""
    blocks = fake.message(channel, ts).blocks or []
    found = [e for b in blocks if b["type"] == "context_actions"
             for e in b["elements"] if e["type"] == "feedback_buttons"]
    assert len(found) == 1, f"message {ts} shows {len(found)} feedback elements"
    return found[0]


async def rate(fake: FakeSlack, channel: str, message_ts: str, good: bool, *, user: str = ANN) -> Envelope:
    """The person presses the 👍 (or 👎) under the app's message: the block_actions payload Slack sends for a
    feedback_buttons element carries the pressed button's value and text."""
    posted = fake.message(channel, message_ts)
    element = feedback_of(fake, channel, message_ts)
    button = element["positive_button" if good else "negative_button"]
    block = next(b for b in posted.blocks or () if b["type"] == "context_actions")
    payload = {"type": "block_actions", "user": {"id": user, "username": user.lower()}, "team": {"id": TEAM_ID},
               "channel": {"id": channel}, "trigger_id": f"trigger-{len(fake.envelopes)}",
               "response_url": fake.response_url(channel, original=message_ts),
               "container": {"type": "message", "message_ts": message_ts, "channel_id": channel,
                             **({"thread_ts": posted.thread_ts} if posted.thread_ts else {})},
               "message": {"ts": message_ts, "text": posted.text, "blocks": posted.blocks},
               "actions": [{"type": "feedback_buttons", "action_id": element.get("action_id", ""),
                            "block_id": block.get("block_id", ""), "value": button["value"], "text": button["text"],
                            "action_ts": f"1700009999.{len(fake.envelopes):06d}"}]}
    return await fake.push("interactive", payload)


async def open_assistant(fake: FakeSlack, channel: str, *, user: str = ANN) -> tuple[str, Envelope]:
    """The person opens the app's assistant pane: a new thread in the app's DM; (its ts, the envelope)."""
    fake.open_channel(channel, "im")
    thread_ts = fake.user_message(channel, "", "USLACKBOT")  # Slack's own opening message of the thread
    event = {"type": "assistant_thread_started", "event_ts": thread_ts,
             "assistant_thread": {"user_id": user, "channel_id": channel, "thread_ts": thread_ts,
                                  "context": {"channel_id": None, "team_id": TEAM_ID}}}
    return thread_ts, await fake.push("events_api", event_callback(event))


def bot_buttons(fake: FakeSlack, channel: str, thread_ts: str | None = None,
                app: SlackApp = MAIN_APP) -> list[tuple[str, str]]:
    """(message ts, button value) of every button the app shows in the channel."""
    return [(m.ts, element["value"]) for m in fake.messages.get(channel, ())
            if m.user == app.bot_user and m.thread_ts == thread_ts
            for block in m.blocks or () if block["type"] == "actions" for element in block["elements"]]
