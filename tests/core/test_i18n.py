"""Every line of the one i18n table has its Chinese, with the same placeholders as the English."""

from __future__ import annotations

import re
import string

from bot.i18n import STRINGS, t
from bot.i18n_cli import CLI_STRINGS


def fields(template: str) -> set[str]:
    return {name for _, name, _, _ in string.Formatter().parse(template) if name}


def test_each_string_has_chinese_with_the_same_placeholders() -> None:
    """Untranslated: no Chinese at all, or the English copied (identical text with words in it; "▶" may stay)."""
    untranslated = [key for key, (en, zh) in STRINGS.items()
                    if not zh.strip() or (zh == en and re.search("[A-Za-z]{3}", re.sub(r"\{[^}]*\}", "", en)))]
    assert untranslated == []
    assert [key for key, (en, zh) in STRINGS.items() if fields(en) != fields(zh)] == []


def test_the_command_line_strings_are_part_of_the_table() -> None:
    assert set(CLI_STRINGS) <= set(STRINGS)
    assert t("zh", "cli_answers_failed", count=2) == "bothub：2 个回答失败"
