"""What a person approving an action must be able to see, decided by Unicode category rather than a list.

Control and format characters (Cc, Cf: ANSI escapes, bidi overrides, zero-width joiners), line and
paragraph separators (Zl, Zp), private-use, surrogate and unassigned code points (Co, Cs, Cn) draw
nothing, move the text or break the line, so an approval prompt could show something other than what
runs; a space other than U+0020 looks like a word break and is not one. Newline and tab are kept.
The shell refuses commands holding any of them; other prompts (MCP calls) show each one as ⟨U+XXXX⟩.
"""

from __future__ import annotations

import unicodedata

HIDDEN_CATEGORIES = frozenset({"Cc", "Cf", "Zl", "Zp", "Co", "Cs", "Cn"})
_KEPT = frozenset("\n\t")


def is_hidden(char: str) -> bool:
    category = unicodedata.category(char)
    return char not in _KEPT and (category in HIDDEN_CATEGORIES or (category == "Zs" and char != " "))


def hidden(text: str) -> list[str]:
    """The hidden code points in `text`, as sorted `U+XXXX` names."""
    return sorted({f"U+{ord(c):04X}" for c in text if is_hidden(c)})


def visible(text: str) -> str:
    """`text` with every hidden code point written out, so the prompt shows exactly what will run."""
    return "".join(f"⟨U+{ord(c):04X}⟩" if is_hidden(c) else c for c in text)
