"""A config file that cannot be used is one clear sentence naming the file, never a traceback."""

from __future__ import annotations

from pathlib import Path

import pytest

from bot.config import ConfigError, load_config


@pytest.mark.parametrize(("text", "problem"), [
    (None, "config file not found: {path}"),
    ("llm: [unclosed\n", "config file {path} is not valid YAML: while parsing a flow sequence…"),
    ("- a list\n- not a mapping\n", "config file {path} must hold a mapping at the top level"),
], ids=["missing", "bad-yaml", "not-a-mapping"])
def test_unusable_config_files_are_clear_errors(tmp_path: Path, text: str | None, problem: str) -> None:
    path = tmp_path / "bothub.yaml"
    if text is not None:
        path.write_text(text, encoding="utf-8")
    with pytest.raises(ConfigError) as caught:
        load_config(path, env={})
    expected = problem.format(path=path)
    if expected.endswith("…"):  # YAML's own explanation follows; its first words are enough
        assert str(caught.value).startswith(expected.removesuffix("…"))
    else:
        assert str(caught.value) == expected


def test_an_empty_file_is_the_defaults(tmp_path: Path) -> None:
    path = tmp_path / "bothub.yaml"
    path.write_text("", encoding="utf-8")
    assert load_config(path, env={}).max_queue == 20
