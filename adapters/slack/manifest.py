"""The Slack app manifest (pure): what `bothub slack-manifest` prints, to paste at api.slack.com/apps →
Create New App → From a manifest. Scopes, events, the slash commands of the command registry, Socket Mode (or
the Events API's request URLs), the Messages tab and the assistant view — one source, so setup and the
adapter never disagree.
"""

from __future__ import annotations

from typing import Any

from bot.adapter import MenuCommand

ENTRY = "bothub"  # the one command that carries every other: /bothub tree
BOT_SCOPES = ("app_mentions:read", "assistant:write", "channels:history", "chat:write", "commands", "files:read",
              "files:write", "groups:history", "im:history", "mpim:history")
BOT_EVENTS = ("app_mention", "assistant_thread_started", "message.channels", "message.groups", "message.im",
              "message.mpim")
# Slack's own commands win over an app's: these stay reachable as /bothub <name> only
SLACK_BUILTINS = frozenset({"active", "archive", "away", "call", "collapse", "dm", "expand", "feed", "invite",
                            "join", "leave", "me", "msg", "mute", "open", "prefs", "remind", "rename", "search",
                            "shrug", "star", "status", "topic", "who"})
MAX_COMMANDS = 50  # slash commands per app
MAX_DESCRIPTION = 100


def manifest(menu: tuple[MenuCommand, ...], *, name: str = "bothub", events_url: str | None = None,
             language: str = "en", per_command: bool = True, entry: str = ENTRY) -> dict[str, Any]:
    """Socket Mode unless `events_url` (the hub's public URL of slack.events_path) is given."""
    describe = {c.name: (c.zh if language == "zh" else c.en) for c in menu}
    names = " | ".join(c.usage.lstrip("/") for c in menu[:8])
    commands: list[dict[str, Any]] = [_command(entry, describe_entry(language), f"{names} | …", events_url)]
    if per_command:
        for c in menu:
            if c.name not in SLACK_BUILTINS and c.name != entry and len(commands) < MAX_COMMANDS:
                hint = c.usage.split(maxsplit=1)[1] if c.takes_arguments else ""
                commands.append(_command(c.name, describe[c.name], hint, events_url))
    settings: dict[str, Any] = {
        "event_subscriptions": {"bot_events": list(BOT_EVENTS)},
        "interactivity": {"is_enabled": True},
        "org_deploy_enabled": False,
        "socket_mode_enabled": events_url is None,
        "token_rotation_enabled": False,
    }
    if events_url is not None:
        settings["event_subscriptions"]["request_url"] = events_url
        settings["interactivity"]["request_url"] = events_url
    return {
        "display_information": {"name": name, "description": describe_entry(language)},
        "features": {
            "app_home": {"home_tab_enabled": False, "messages_tab_enabled": True,
                         "messages_tab_read_only_enabled": False},
            "bot_user": {"display_name": name, "always_online": True},
            "assistant_view": {"assistant_description": describe_entry(language)},
            "slash_commands": commands,
        },
        "oauth_config": {"scopes": {"bot": list(BOT_SCOPES)}},
        "settings": settings,
    }


def describe_entry(language: str) -> str:
    if language == "zh":
        return "对话、分支与工具的 AI 助手"
    return "An AI assistant with branching conversations and tools"


def _command(name: str, description: str, hint: str, url: str | None) -> dict[str, Any]:
    command: dict[str, Any] = {"command": f"/{name}", "description": description[:MAX_DESCRIPTION],
                               "should_escape": False}
    if hint:
        command["usage_hint"] = hint[:1000]
    if url is not None:
        command["url"] = url
    return command
