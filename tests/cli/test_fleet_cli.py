"""`bothub agents | identities | bind | secrets` in process (the parser `bothub` uses, the real SQLite store): each
subcommand's listing as text and JSON, what it refuses with the reason on stderr and exit code 1, and a key
rotation after which the credentials open only with the new key."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from bot.adapter import installed_specs
from bot.cli import fleet
from bot.cli.main import build_parser
from bot.config import Config
from bot.fleet.secrets import NEW_KEY_ENV, new_key
from tests.fleet.conftest import KEY, SUPPORT_TOKEN
from tests.harness import make_config


@pytest.fixture
def setup(tmp_path: Path) -> tuple[Config, dict[str, str]]:
    cfg, env = make_config(tmp_path, "http://127.0.0.1:9/v1")
    return cfg, env | {"BOTHUB_SECRET_KEY": KEY, "SUPPORT_TOKEN": SUPPORT_TOKEN}


async def bothub(setup: tuple[Config, dict[str, str]], capsys: pytest.CaptureFixture[str],
                 *argv: str) -> tuple[int, str, str]:
    cfg, env = setup
    args = build_parser(installed_specs()).parse_args(list(argv))
    code = await fleet.run(cfg, args.command, args, env)
    out, err = capsys.readouterr()
    return code, out, err


async def test_agents_set_listed_as_text_and_json_and_removed_once(
        setup: tuple[Config, dict[str, str]], capsys: pytest.CaptureFixture[str]) -> None:
    assert await bothub(setup, capsys, "agents", "set", "helper", "--model", "helper-model", "--admins", "7, 8",
                        "--allow-tools", "read_file,recall", "--deny-tools", "shell", "--mcp", "docs",
                        "--no-shell") == (0, "agent helper saved\n", "")
    code, out, _ = await bothub(setup, capsys, "agents", "list", "--json")
    helper = next(a for a in json.loads(out) if a["name"] == "helper")
    assert code == 0 and (helper["model"], helper["admins"]) == ("helper-model", ["7", "8"])
    assert helper["tools"] == {"allow": ["read_file", "recall"], "deny": ["shell"], "shell": False, "mcp": ["docs"]}
    code, out, _ = await bothub(setup, capsys, "agents")
    assert code == 0 and "helper           model=helper-model  workspace=" in out and out.startswith("default ")
    assert await bothub(setup, capsys, "agents", "set") == (1, "", "bothub: name the agent\n")
    assert await bothub(setup, capsys, "agents", "remove", "helper") == (0, "agent helper removed\n", "")
    assert await bothub(setup, capsys, "agents", "remove", "helper") == (1, "no stored agent named helper\n", "")


async def test_identities_and_bindings_refused_listed_and_removed(
        setup: tuple[Config, dict[str, str]], capsys: pytest.CaptureFixture[str]) -> None:
    refusals = {
        ("identities", "add"): "name the identity",
        ("identities", "add", "support"): "--platform names the identity's platform",
        ("identities", "enable", "ghost"): "no identity named 'ghost'",
        ("identities", "add", "support", "--platform", "telegram", "--credential", "TELEGRAM_BOT_TOKEN=UNSET"):
            "--credential TELEGRAM_BOT_TOKEN=UNSET: UNSET is not set",
        ("bind", "support"): "name the agent: bothub bind IDENTITY AGENT",
    }
    for argv, said in refusals.items():
        assert await bothub(setup, capsys, *argv) == (1, "", f"bothub: {said}\n"), argv
    assert await bothub(setup, capsys, "identities", "add", "support", "--platform", "telegram", "--no-check",
                        "--credential", "TELEGRAM_BOT_TOKEN=SUPPORT_TOKEN") == (0, "identity support saved\n", "")
    code, out, _ = await bothub(setup, capsys, "identities")
    assert code == 0 and f"support          telegram   on  TELEGRAM_BOT_TOKEN=••••{SUPPORT_TOKEN[-4:]}" in out
    assert SUPPORT_TOKEN not in out
    assert (await bothub(setup, capsys, "bind", "support", "default", "--kind", "dm"))[0] == 0
    assert await bothub(setup, capsys, "bind") == (0, "support/*/*/*/dm                         → default\n", "")
    code, out, _ = await bothub(setup, capsys, "bind", "--list", "--json")
    assert code == 0 and [b["place"] for b in json.loads(out)] == ["support/*/*/*/dm"]
    assert (await bothub(setup, capsys, "identities", "remove", "support"))[0] == 1  # still bound
    assert await bothub(setup, capsys, "bind", "support", "--kind", "dm", "--remove") == (
        0, "binding support/*/*/*/dm removed\n", "")
    assert await bothub(setup, capsys, "identities", "remove", "support") == (0, "identity support removed\n", "")


async def test_a_key_rotation_re_seals_every_credential_set(
        setup: tuple[Config, dict[str, str]], capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = await bothub(setup, capsys, "secrets", "new-key")
    assert code == 0 and len(out.strip()) > 40 and out.strip() != KEY
    await bothub(setup, capsys, "identities", "add", "support", "--platform", "telegram", "--no-check",
                 "--credential", "TELEGRAM_BOT_TOKEN=SUPPORT_TOKEN")
    cfg, env = setup
    rotated = (cfg, env | {NEW_KEY_ENV: new_key()})
    code, out, _ = await bothub(rotated, capsys, "secrets", "rotate-key")
    assert code == 0 and out.startswith("1 credential set(s) re-encrypted")
    code, _, err = await bothub(setup, capsys, "identities")  # the old key opens nothing now
    assert code == 1 and err.startswith("bothub: ")
    new_only = (cfg, env | {"BOTHUB_SECRET_KEY": rotated[1][NEW_KEY_ENV]})
    code, out, _ = await bothub(new_only, capsys, "identities")
    assert code == 0 and f"TELEGRAM_BOT_TOKEN=••••{SUPPORT_TOKEN[-4:]}" in out
