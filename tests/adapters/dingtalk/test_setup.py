"""Set-up mistakes a person can make, each named: missing credentials, a base that is no URL, DingTalk out of
reach."""

from __future__ import annotations

import socket

import pytest

from adapters.dingtalk import DingTalkConfig
from adapters.dingtalk import adapter as dingtalk_adapter
from bot.config import ConfigError
from tests.adapters.contract.driver import services
from tests.adapters.dingtalk.conftest import ENV, Make


@pytest.mark.parametrize(("env", "reason"), [
    ({"DINGTALK_CLIENT_ID": ENV["DINGTALK_CLIENT_ID"]}, "needs DINGTALK_CLIENT_ID and DINGTALK_CLIENT_SECRET"),
    ({"DINGTALK_CLIENT_SECRET": ENV["DINGTALK_CLIENT_SECRET"]}, "needs DINGTALK_CLIENT_ID and DINGTALK_CLIENT_SECRET"),
    ({**ENV, "DINGTALK_API_BASE": "api.dingtalk.com"}, "must be a URL, not 'api.dingtalk.com'"),
    ({**ENV, "DINGTALK_OAPI_BASE": "ftp://oapi"}, "must be a URL, not 'ftp://oapi'"),
])
def test_a_set_up_mistake_is_a_config_error_naming_it(env: dict[str, str], reason: str) -> None:
    with pytest.raises(ConfigError, match=reason):
        dingtalk_adapter.create(DingTalkConfig(), env, services([]))


def closed_port() -> int:
    """A port nothing listens on: bound, then let go."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


async def test_dingtalk_out_of_reach_is_a_connection_error_naming_where(make: Make) -> None:
    base = f"http://127.0.0.1:{closed_port()}"  # nothing listens there
    with pytest.raises(ConnectionError, match=f"cannot reach DingTalk at {base}"):
        await make(DINGTALK_API_BASE=base, DINGTALK_OAPI_BASE=base)
