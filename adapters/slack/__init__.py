"""Slack: slack_sdk's Web API client; events by Socket Mode (default) or the Events API; native streams."""

from __future__ import annotations

import argparse
import json
from collections.abc import Mapping
from typing import Literal

from bot.adapter import AdapterSpec, CliCommand, MenuCommand, PlatformConfig, imported


class SlackConfig(PlatformConfig):
    mode: Literal["socket", "events"] = "socket"  # socket: a WebSocket, no public URL; events: HTTP, signed
    api_base: str | None = None  # env SLACK_API_BASE wins
    events_path: str = "/slack/events"  # events mode: the request URL's path on the hub's server
    command: str = "bothub"  # the slash command that carries every other (/bothub tree)
    streaming: bool = True  # native streams (chat.startStream) in threads; off: post, then chat.update
    assistant: bool = True  # "is thinking…", suggested prompts and titles in assistant threads


def _manifest_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--name", default="bothub", help="the app's and bot user's name")
    parser.add_argument("--events-url", metavar="URL", help="Events API instead of Socket Mode: the hub's public "
                        "URL of slack.events_path, e.g. https://bot.example.org/slack/events")
    parser.add_argument("--lang", choices=("en", "zh"), default="en", help="language of the command descriptions")
    parser.add_argument("--only-entry", action="store_true", help="only /bothub, no slash command per command")


async def _print_manifest(section: SlackConfig, _env: Mapping[str, str], args: argparse.Namespace,
                          menu: tuple[MenuCommand, ...]) -> int:
    """`bothub slack-manifest`: the app manifest to paste at api.slack.com/apps → From a manifest."""
    from adapters.slack.manifest import manifest

    print(json.dumps(manifest(menu, name=args.name, events_url=args.events_url, language=args.lang,
                              per_command=not args.only_entry, entry=section.command), indent=2, ensure_ascii=False))
    return 0


SPEC = AdapterSpec(
    name="slack",
    config_model=SlackConfig,
    create=imported("adapters.slack.adapter", "create"),  # slack_sdk is imported only when Slack runs
    secrets=("SLACK_BOT_TOKEN", "SLACK_APP_TOKEN", "SLACK_SIGNING_SECRET"),
    required_env=("SLACK_BOT_TOKEN", "SLACK_APP_TOKEN"),  # Socket Mode; the Events API: `slack.enabled: true`
    doctor=imported("adapters.slack.adapter", "doctor"),
    commands=(CliCommand("slack-manifest", "print the Slack app manifest (scopes, events, slash commands)",
                         _manifest_arguments, _print_manifest),),
    loggers=("slack_sdk",),
    first_steps=("Slack: run `bothub slack-manifest`, then api.slack.com/apps → Create New App → From a manifest → "
                 "Install; copy the Bot token (xoxb-) and an App-Level token with connections:write (xapp-)",
                 "Slack：运行 `bothub slack-manifest`，然后 api.slack.com/apps → Create New App → From a manifest → "
                 "安装；复制 Bot 令牌（xoxb-）和带 connections:write 的 App-Level 令牌（xapp-）"),
)
