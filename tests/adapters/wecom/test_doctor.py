"""`bothub doctor` for WeCom: the long connection's subscription is tried for real; callback mode checks that
the EncodingAESKey is one; missing credentials are named."""

from __future__ import annotations

import pytest

from adapters.wecom import SPEC, WeComConfig
from bot.config import ConfigError
from tests.adapters.wecom.conftest import ENV
from tests.fakes.wecom_callback import ENCODING_AES_KEY, TOKEN
from tests.fakes.wecom_ws import FakeWeCom


async def test_doctor_subscribes_with_the_credentials(wecom: FakeWeCom) -> None:
    assert SPEC.doctor is not None
    line = await SPEC.doctor(WeComConfig(ws_url=wecom.url), ENV)
    assert "subscribed" in line and ENV["WECOM_BOT_SECRET"] not in line


async def test_doctor_names_a_refused_secret(wecom: FakeWeCom) -> None:
    assert SPEC.doctor is not None
    with pytest.raises(ConfigError, match="refused"):
        await SPEC.doctor(WeComConfig(ws_url=wecom.url), {**ENV, "WECOM_BOT_SECRET": "wrong"})


async def test_doctor_names_what_is_missing() -> None:
    assert SPEC.doctor is not None
    with pytest.raises(ConfigError, match="WECOM_BOT_SECRET"):
        await SPEC.doctor(WeComConfig(), {"WECOM_BOT_ID": "x"})
    with pytest.raises(ConfigError, match="WECOM_ENCODING_AES_KEY"):
        await SPEC.doctor(WeComConfig(transport="callback"), {"WECOM_TOKEN": TOKEN})


async def test_doctor_checks_the_encoding_aes_key() -> None:
    assert SPEC.doctor is not None
    env = {"WECOM_TOKEN": TOKEN, "WECOM_ENCODING_AES_KEY": ENCODING_AES_KEY}
    assert "well formed" in await SPEC.doctor(WeComConfig(transport="callback"), env)
    with pytest.raises(ConfigError, match=r"43 characters|base64"):
        await SPEC.doctor(WeComConfig(transport="callback"), {**env, "WECOM_ENCODING_AES_KEY": "short"})
