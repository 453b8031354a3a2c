"""A broken adapter import fails the suite; nothing skips quietly because a parser is missing."""

from __future__ import annotations

import importlib
import sys

import pytest


@pytest.mark.parametrize("package", ["adapters.telegram", "adapters.discord", "adapters.feishu",
                                     "adapters.dingtalk", "adapters.wecom"])
def test_fuzz_module_fails_when_a_parser_cannot_be_imported(package: str, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delitem(sys.modules, "tests.reliability.test_fuzz", raising=False)
    # mutation: the parser's import is broken
    monkeypatch.setitem(sys.modules, f"{package}.inbound", None)
    monkeypatch.delattr(importlib.import_module(package), "inbound", raising=False)
    with pytest.raises(ImportError, match=f"{package}.inbound"):
        importlib.import_module("tests.reliability.test_fuzz")
