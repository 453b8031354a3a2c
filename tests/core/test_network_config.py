"""`network.proxy` and `network.no_proxy` in bothub.yaml: they become the variables every outbound client reads,
winning over the environment's (either case), with NO_PROXY kept and extended; then each client's choice of
proxy follows them."""

from __future__ import annotations

from pathlib import Path

import pytest

from bot.config import load_config, proxy_for


def test_the_configured_proxy_wins_and_no_proxy_adds_to_the_environments(tmp_path: Path) -> None:
    path = tmp_path / "bothub.yaml"
    path.write_text("network:\n  proxy: http://proxy.corp:3128\n  no_proxy: [models.internal, .lan]\n",
                    encoding="utf-8")
    env = {"https_proxy": "http://old:1", "HTTP_PROXY": "http://old:2", "no_proxy": "localhost",
           "OPENAI_API_KEY": "k"}
    load_config(path, env).network.apply(env)
    assert {k: v for k, v in env.items() if "proxy" in k.lower()} == {
        "HTTPS_PROXY": "http://proxy.corp:3128", "HTTP_PROXY": "http://proxy.corp:3128",
        "ALL_PROXY": "http://proxy.corp:3128", "NO_PROXY": "localhost,models.internal,.lan"}
    assert proxy_for("https://api.openai.com/v1", env) == "http://proxy.corp:3128"
    assert proxy_for("wss://gateway.discord.gg", env) == "http://proxy.corp:3128"
    for direct in ("https://models.internal/v1", "http://printer.lan/", "http://localhost:8080/"):
        assert proxy_for(direct, env) is None, direct


def test_without_the_section_the_environment_decides(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)  # no bothub.yaml here
    env = {"https_proxy": "proxy.home:8080", "NO_PROXY": "*", "OPENAI_API_KEY": "k"}
    load_config(None, env).network.apply(env)
    assert env["https_proxy"] == "proxy.home:8080" and "HTTPS_PROXY" not in env
    assert proxy_for("https://api.openai.com/v1", {"https_proxy": "proxy.home:8080"}) == "http://proxy.home:8080"
    assert proxy_for("https://api.openai.com/v1", env) is None  # NO_PROXY=*
