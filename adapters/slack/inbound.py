"""Slack payloads → IncomingMessage (pure): message and app_mention events, slash commands, button presses.

DMs (the app's Messages tab) and app mentions address the bot; other channel talk is overheard. A message in a
thread carries the thread's ts as `thread_id`, so every thread is a session of its own and its answers stay in
it. The mention and Slack's markup (`<@U…>`, `<url|label>`, `&amp;`) are taken out here, once.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from bot.messages import Attachment, AttachmentKind, ButtonPress, IncomingMessage, Interaction, Overheard

PLATFORM = "slack"
_KEPT_SUBTYPES = frozenset({None, "file_share", "thread_broadcast"})  # edits, joins, bot posts: not talk
_MARKUP = re.compile(r"<([^<>|]+)(?:\|([^<>]*))?>")


@dataclass(frozen=True, slots=True)
class AssistantThread:
    """A user opened the app's assistant pane: a new thread to greet with suggested prompts."""

    channel: str
    thread_ts: str


Parsed = IncomingMessage | Overheard | AssistantThread | None


def is_direct(channel: str, channel_type: str | None = None) -> bool:
    """DM channels are "im" (their ids start with D); channels, private channels and group DMs are groups."""
    return channel_type == "im" if channel_type else channel.startswith("D")


def plain(text: str, bot_user: str) -> str:
    """Slack's markup as a person reads it; the bot's own mention is dropped."""

    def one(match: re.Match[str]) -> str:
        target, label = match.group(1), match.group(2)
        if target == f"@{bot_user}":
            return ""
        if target.startswith(("@", "#")):
            return f"{target[0]}{label or target[1:]}"
        if target.startswith("!"):
            return f"@{label or target[1:].split('^')[0]}"
        return label or target  # a link: <https://…|label>

    unmarked = _MARKUP.sub(one, text)
    return re.sub(r"[ \t]{2,}", " ", unmarked.replace("&lt;", "<").replace("&gt;", ">").replace("&amp;", "&")).strip()


def _kind(mime: str, subtype: str | None) -> AttachmentKind:
    if mime.startswith("image/"):
        return AttachmentKind.IMAGE
    if mime.startswith("audio/") or subtype == "slack_audio":
        return AttachmentKind.AUDIO
    if mime.startswith("video/"):
        return AttachmentKind.VIDEO
    return AttachmentKind.FILE


def attachments(event: dict[str, Any]) -> tuple[Attachment, ...]:
    files = event.get("files")
    if not isinstance(files, list):
        return ()
    found = []
    for f in files:
        if isinstance(f, dict) and f.get("id") and f.get("mode") != "tombstone":
            mime = str(f.get("mimetype") or "")
            size = f.get("size")
            found.append(Attachment(_kind(mime, f.get("subtype")), str(f.get("name") or ""), mime,
                                    size if isinstance(size, int) else None, str(f["id"])))
    return tuple(found)


def _name(event: dict[str, Any]) -> str:
    profile = event.get("user_profile")
    if isinstance(profile, dict):
        return str(profile.get("display_name") or profile.get("real_name") or profile.get("name") or event["user"])
    return str(event["user"])


def parse_event(event: dict[str, Any], bot_user: str, bot_id: str) -> Parsed:
    """One Events API `event` (from Socket Mode or HTTP); None: nothing to hand over."""
    kind = event.get("type")
    if kind == "assistant_thread_started":
        thread = event.get("assistant_thread") or {}
        channel, ts = thread.get("channel_id"), thread.get("thread_ts")
        return AssistantThread(str(channel), str(ts)) if channel and ts else None
    if kind not in ("message", "app_mention") or event.get("subtype") not in _KEPT_SUBTYPES:
        return None
    user, channel, ts = event.get("user"), event.get("channel"), event.get("ts")
    if not user or not channel or not ts or event.get("bot_id") or user == bot_user or event.get("bot_id") == bot_id:
        return None  # bots, ourselves included, are never answered
    raw = str(event.get("text") or "")
    text, files = plain(raw, bot_user), attachments(event)
    thread_ts = event.get("thread_ts")
    thread = str(thread_ts) if thread_ts else None
    direct = is_direct(str(channel), event.get("channel_type"))
    if kind == "message" and not direct:
        if f"<@{bot_user}>" in raw:
            return None  # the app_mention event for the same message is the one answered
        if not text and not files:
            return None
        return Overheard(PLATFORM, str(channel), thread, str(ts), str(user), _name(event), text, files)
    return IncomingMessage(PLATFORM, str(channel), thread, str(ts), str(user), _name(event), not direct, True,
                           text, attachments=files)


def command_text(command: str, text: str, entry: str) -> str:
    """`/bothub tree 3` → `/tree 3`; `/tree 3` (its own slash command) → `/tree 3`; `/bothub` → `/help`."""
    name, rest = command.lstrip("/"), text.strip()
    if name == entry:
        words = rest.split(maxsplit=1)
        if not words:
            return "/help"
        return "/" + words[0].lstrip("/") + (f" {words[1]}" if len(words) > 1 else "")
    return f"/{name}" + (f" {rest}" if rest else "")


def parse_command(form: dict[str, str], entry: str) -> IncomingMessage | None:
    """A slash command (Socket Mode payload or HTTP form); Slack sends no thread for one."""
    channel, user, command = form.get("channel_id"), form.get("user_id"), form.get("command")
    if not channel or not user or not command:
        return None
    trigger = form.get("trigger_id") or f"{channel}:{command}:{form.get('text', '')}"
    return IncomingMessage(PLATFORM, channel, None, trigger, user, form.get("user_name") or user,
                           not is_direct(channel), True, command_text(command, form.get("text", ""), entry),
                           origin=Interaction(trigger))


def parse_action(payload: dict[str, Any]) -> IncomingMessage | None:
    """A block_actions press on one of our buttons: its value is the command text. A press on an answer's 👍/👎
    (feedback_buttons) names no pressed message: what it gets back never replaces the answer it rates."""
    if payload.get("type") != "block_actions":
        return None
    actions, user = payload.get("actions"), payload.get("user") or {}
    container = payload.get("container") or {}
    channel = (payload.get("channel") or {}).get("id") or container.get("channel_id")
    if not isinstance(actions, list) or not actions or not channel or not user.get("id"):
        return None
    value = str(actions[0].get("value") or "")
    if not value.startswith("/"):
        return None
    pressed = container.get("message_ts") or (payload.get("message") or {}).get("ts")
    thread = container.get("thread_ts") or (payload.get("message") or {}).get("thread_ts")
    rates = actions[0].get("type") == "feedback_buttons"
    press_id = str(actions[0].get("action_ts") or payload.get("trigger_id") or f"{channel}:{pressed}:{value}")
    return IncomingMessage(PLATFORM, str(channel), str(thread) if thread else None, press_id, str(user["id"]),
                           str(user.get("username") or user.get("name") or user["id"]), not is_direct(str(channel)),
                           True, value, origin=ButtonPress(press_id, str(pressed) if pressed and not rates else None))
