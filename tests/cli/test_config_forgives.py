"""Config mistakes a newcomer makes get a clear answer at load time, not odd behaviour later (issue 12 §5)."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from bot.config import ConfigError, load_config
from bot.ops.redact import readable_secrets_warning

REPO = Path(__file__).resolve().parents[2]


def load(tmp_path: Path, text: str) -> object:
    path = tmp_path / "bothub.yaml"
    path.write_text(text, encoding="utf-8")
    return load_config(path, env={})


def test_a_misspelt_key_gets_the_closest_known_key(tmp_path: Path) -> None:
    with pytest.raises(ConfigError) as caught:
        load(tmp_path, "max_queu: 3\nllm:\n  max_turn: 4\ntelegramm: {}\n")
    text = str(caught.value)
    assert "max_queu: unknown setting — did you mean 'max_queue'?" in text
    assert "llm.max_turn: unknown setting — did you mean 'max_turns'?" in text
    assert "telegramm: unknown setting — did you mean 'telegram'?" in text  # an adapter's section
    with pytest.raises(ConfigError, match=r"telegram\.acess: unknown setting — did you mean 'access'?"):
        load(tmp_path, "telegram:\n  acess: {}\n")
    with pytest.raises(ConfigError, match=r"telegram\.access\.admin: unknown setting — did you mean 'admins'?"):
        load(tmp_path, "telegram:\n  access: {admin: [1]}\n")


def test_a_key_with_nothing_close_is_named_without_a_guess(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match=r"zzzz: unknown setting\n|zzzz: unknown setting$"):
        load(tmp_path, "zzzz: 1\n")


@pytest.mark.parametrize(("text", "where"), [
    ("max_queue: 0", "max_queue"),
    ("llm: {max_turns: 0}", "llm.max_turns"),
    ("llm: {timeout: 0}", "llm.timeout"),
    ("llm: {run_deadline: -5}", "llm.run_deadline"),
    ("tools: {shell_timeout: 0}", "tools.shell_timeout"),
    ("server: {port: 70000}", "server.port"),
    ("server: {port: -1}", "server.port"),
])
def test_out_of_range_values_are_refused_at_load(tmp_path: Path, text: str, where: str) -> None:
    with pytest.raises(ConfigError, match=rf"  {where}: Input should be"):
        load(tmp_path, text + "\n")


def test_ids_in_access_lists_may_be_numbers(tmp_path: Path) -> None:
    cfg = load(tmp_path, "telegram:\n  access: {admins: [123], allow_chats: [-1001234567890, '42']}\n")
    access = cfg.sections["telegram"].access  # type: ignore[attr-defined]
    assert access.admins == ["123"] and access.allow_chats == ["-1001234567890", "42"]


def test_the_example_config_loads_and_is_not_taken_for_secrets(tmp_path: Path) -> None:
    copy = tmp_path / "bothub.yaml"
    shutil.copyfile(REPO / "config" / "bothub.example.yaml", copy)
    copy.chmod(0o644)
    load_config(copy, env={})
    assert readable_secrets_warning(copy) is None  # context_tokens: is not a token


@pytest.mark.parametrize("line", ["api_key: sk-live-123", "  app_secret: abc", "OPENAI_API_KEY=xyz", "token: 'x'"])
def test_a_readable_config_holding_a_secret_still_warns(tmp_path: Path, line: str) -> None:
    path = tmp_path / "bothub.yaml"
    path.write_text(f"llm:\n  context_tokens: 1000\n{line}\n", encoding="utf-8")
    path.chmod(0o644)
    assert "seems to contain secrets" in (readable_secrets_warning(path) or "")
