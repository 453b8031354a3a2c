"""Card rendering rules and create()'s configuration errors (no network needed)."""

from __future__ import annotations

import pytest

from adapters.feishu import FeishuConfig
from adapters.feishu import render as cards
from adapters.feishu.adapter import create
from bot.adapter import AdapterServices
from bot.config import ConfigError
from bot.replies import Button, Reply
from tests.adapters.feishu.conftest import env


def test_model_output_cannot_inject_card_tags_but_code_is_kept() -> None:
    text = 'hi <at id=all></at> and <font color="red">x</font>\n`a<b`\n```\nif a<b: pass\n```'
    rendered = cards.markdown(Reply(text))
    assert "<at" not in rendered and "<font" not in rendered
    assert "&lt;at id=all>" in rendered
    assert "`a<b`" in rendered and "if a<b: pass" in rendered


def test_monospace_is_one_code_block_even_if_the_text_has_fences() -> None:
    rendered = cards.markdown(Reply("├─ [1] ```x```", monospace=True))
    assert rendered.count("```") == 2 and rendered.startswith("```\n├─")


def test_buttons_carry_the_command_text() -> None:
    card = cards.card(Reply("t", title="T", buttons=((Button("Go", "/goto 3"),),)), streaming=False)
    assert card["header"]["title"]["content"] == "T"
    (column,) = card["body"]["elements"][1]["columns"]
    assert column["elements"][0]["behaviors"] == [{"type": "callback", "value": {"action": "/goto 3"}}]


def _services(routes: list[str]) -> AdapterServices:
    async def never(_: object) -> bool:
        return False

    return AdapterServices(never, never, lambda m, p, h: routes.append(p))  # type: ignore[arg-type]


def test_missing_credentials_and_unprotected_webhooks_are_config_errors() -> None:
    with pytest.raises(ConfigError, match="FEISHU_APP_ID"):
        create(FeishuConfig(), {}, _services([]))
    bare = {k: v for k, v in env().items() if k in ("FEISHU_APP_ID", "FEISHU_APP_SECRET")}
    with pytest.raises(ConfigError, match="FEISHU_ENCRYPT_KEY"):
        create(FeishuConfig(transport="webhook"), bare, _services([]))
    with pytest.raises(ConfigError, match="domain"):
        create(FeishuConfig(domain="open.example"), bare, _services([]))


def test_webhook_route_is_registered_at_create() -> None:
    routes: list[str] = []
    adapter = create(FeishuConfig(transport="webhook", webhook_path="/hooks/lark"), env(),
                     _services(routes))
    assert routes == ["/hooks/lark"]
    assert not adapter.connected()  # not started yet
