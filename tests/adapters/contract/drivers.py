"""Which driver speaks for which adapter. The suite runs once per folder under adapters/, found the way
core finds them (bot/adapter.py), never listed by hand: a new folder joins at once, and fails every
contract test loudly until it exports a spec and has a driver here.
"""

from __future__ import annotations

from collections.abc import Callable

import pytest

from bot.adapter import find_spec, installed_platforms
from tests.adapters.contract.console import ConsoleDriver
from tests.adapters.contract.dingtalk import DingTalkDriver
from tests.adapters.contract.driver import Driver
from tests.adapters.contract.http import ApiDriver, WebDriver
from tests.adapters.contract.messaging import DiscordDriver, FeishuDriver, TelegramDriver
from tests.adapters.contract.slack import SlackDriver
from tests.adapters.contract.wecom import WeComDriver

DRIVERS: dict[str, Callable[[pytest.MonkeyPatch], Driver]] = {
    "telegram": lambda _: TelegramDriver(),
    "discord": DiscordDriver,  # it puts discord.py's process-wide endpoints back afterwards
    "feishu": lambda _: FeishuDriver(),
    "console": lambda _: ConsoleDriver(),
    "web": lambda _: WebDriver(),
    "api": lambda _: ApiDriver(),
    "dingtalk": lambda _: DingTalkDriver(),
    "slack": lambda _: SlackDriver(),
    "wecom": lambda _: WeComDriver(),
}


def platforms() -> tuple[str, ...]:
    return installed_platforms()


def make_driver(name: str, monkeypatch: pytest.MonkeyPatch) -> Driver:
    if find_spec(name) is None:
        pytest.fail(f"adapters/{name}/ exports no SPEC (an AdapterSpec): core cannot find it, nor can this suite")
    factory = DRIVERS.get(name)
    if factory is None:
        pytest.fail(f"adapters/{name}/ has no contract driver: add one to DRIVERS in {__name__.replace('.', '/')}.py "
                    "(it starts the real adapter against its real transport: a fake server, a client, its streams)")
    return factory(monkeypatch)
