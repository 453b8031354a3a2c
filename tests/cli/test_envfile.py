"""`.env` parsing: the shapes people write, and never overriding what the environment already says."""

from __future__ import annotations

from pathlib import Path

from bot.cli import envfile


def test_the_common_shapes_parse() -> None:
    text = ("# a comment\n\nexport A=1\nB = two words  # a note\nC='quoted # kept'\nD=\"x=y\"\n"
            "  # indented comment\nnot a line\nE=\n")
    assert envfile.parse(text) == {"A": "1", "B": "two words", "C": "quoted # kept", "D": "x=y", "E": ""}


def test_set_variables_win_and_a_missing_file_is_fine(tmp_path: Path) -> None:
    path = tmp_path / ".env"
    assert envfile.load(path, {}) == []
    path.write_text("A=from-file\nB=from-file\n", encoding="utf-8")
    environ = {"A": "already set"}
    assert envfile.load(path, environ) == ["B"]
    assert environ == {"A": "already set", "B": "from-file"}
