"""The contract suite finds its adapters the way core does: a new folder under adapters/ is in it at once."""

from __future__ import annotations

import contextlib
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

import adapters
from bot.adapter import find_spec, installed_platforms
from tests.adapters.contract.drivers import DRIVERS, make_driver, platforms


def test_every_adapter_folder_exports_a_spec_and_has_a_driver() -> None:
    assert platforms() == installed_platforms() == ("api", "console", "dingtalk", "discord", "feishu", "slack",
                                                    "telegram", "web", "wecom")
    assert [name for name in platforms() if find_spec(name) is None] == []
    assert sorted(DRIVERS) == sorted(platforms())  # no driver is left over from a platform that is gone


@contextlib.contextmanager
def planted(tmp_path: Path, name: str, source: str) -> Iterator[str]:
    """An adapter folder `name` beside the real ones, for the block only."""
    (tmp_path / name).mkdir()
    (tmp_path / name / "__init__.py").write_text(source, encoding="utf-8")
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(adapters, "__path__", [*adapters.__path__, str(tmp_path)])
        installed_platforms.cache_clear()
        try:
            yield name
        finally:
            sys.modules.pop(f"adapters.{name}", None)
    installed_platforms.cache_clear()


SPEC_ONLY = ("from bot.adapter import AdapterSpec, PlatformConfig\n\n"
             "SPEC = AdapterSpec(name='seventh', config_model=PlatformConfig, create=lambda *_: None)\n")


def test_a_seventh_adapter_joins_the_suite_and_fails_loudly_without_a_driver(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    with planted(tmp_path, "seventh", SPEC_ONLY) as seventh:
        assert seventh in platforms()  # what the conftest's `driver` fixture is parametrized with
        assert find_spec(seventh) is not None
        with pytest.raises(pytest.fail.Exception, match="adapters/seventh/ has no contract driver"):
            make_driver(seventh, monkeypatch)
    assert "seventh" not in platforms()


def test_a_folder_without_a_spec_fails_loudly_too(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    with planted(tmp_path, "half_done", '"""no SPEC yet"""\n') as half_done:
        assert half_done in platforms()
        with pytest.raises(pytest.fail.Exception, match="adapters/half_done/ exports no SPEC"):
            make_driver(half_done, monkeypatch)
