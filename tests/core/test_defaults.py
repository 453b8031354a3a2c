"""The README's "Defaults" table is the config model's defaults, row for row, both ways: every documented key
is a field with exactly that default, and every field (core and each platform's section) is documented.
A wrong default (a media cap, a pacing limit) or a new setting left out of the README fails here."""

from __future__ import annotations

import json
import re
from enum import Enum
from pathlib import Path
from typing import Any

from pydantic import BaseModel
from pydantic_core import PydanticUndefined

from bot.adapter import installed_specs
from bot.config import Config

README = Path(__file__).resolve().parents[2] / "README.md"
ROW = re.compile(r"^\| `([a-z0-9_.]+)` \| `(.*)` \|", re.M)


def shown(value: Any) -> str:
    """A default as the README writes it: JSON, with paths and enums as their text."""
    if isinstance(value, Path | Enum):
        value = value.value if isinstance(value, Enum) else str(value)
    if isinstance(value, BaseModel):
        value = value.model_dump(mode="json")
    return json.dumps(value, ensure_ascii=False, default=str)


def defaults(model: type[BaseModel], prefix: str = "") -> dict[str, str]:
    """Every leaf field of `model` with its default; a nested section's fields under `section.`."""
    found: dict[str, str] = {}
    for name, field in model.model_fields.items():
        key = f"{prefix}{name}"
        value = field.default_factory() if field.default_factory is not None else field.default  # type: ignore[call-arg]
        if value is PydanticUndefined:
            continue
        if isinstance(value, BaseModel) and type(value).model_fields:
            found |= defaults(type(value), f"{key}.")
        else:
            found[key] = shown(value)
    return found


def model_defaults() -> dict[str, str]:
    found = defaults(Config)
    found.pop("sections", None)  # the platforms' own sections, below
    for spec in installed_specs():
        found |= defaults(spec.config_model, f"{spec.name}.")
    return found


def documented() -> dict[str, str]:
    text = README.read_text(encoding="utf-8")
    section = text[text.index("### Defaults"):]
    section = section[:section.index("\n## ")]
    return {key: value.replace("\\|", "|") for key, value in ROW.findall(section)}


def test_every_documented_default_is_the_models_and_every_field_is_documented() -> None:
    table, model = documented(), model_defaults()
    assert len(table) > 100, "the README's Defaults table was not found whole"
    assert sorted(set(table) - set(model)) == [], "documented keys the config does not have"
    assert sorted(set(model) - set(table)) == [], "config keys the README's Defaults table leaves out"
    assert {k: table[k] for k in model if table[k] != model[k]} == {}, "documented defaults that are wrong"
