"""The console shows the model's Markdown as a terminal reads it: the layout in plain text, the styles as ANSI
codes unless NO_COLOR is set (the pty tests see only a short answer; every block kind is held here)."""

from __future__ import annotations

import pytest

from adapters.console.markdown import STYLES, to_terminal

DOC = """# Title

Some **bold**, *it*, ~~gone~~ and `code` with a [link](https://example.org), ![alt](x.png) and <b>raw</b>.
Second line  
hard break

> quoted
> > deeper

5. five
6. six
   - nested a
   - nested b
7. seven

```
code block
  indented
```

---

    indented code"""

LAYOUT = """Title

Some bold, it, gone and code with a link (https://example.org), [alt] and <b>raw</b>.
Second line
hard break

│ quoted

│ │ deeper

5. five
6. six
  • nested a
  • nested b
7. seven

  code block
    indented

────────────────────────────────────────

  indented code"""


def test_without_colour_every_block_keeps_its_layout(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("NO_COLOR", "1")
    assert to_terminal(DOC) == LAYOUT


def test_with_colour_the_styles_open_and_close_around_their_words(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("NO_COLOR", raising=False)
    b, i, d, u, c, r = (STYLES[k] for k in ("bold", "italic", "dim", "underline", "code", "reset"))
    shown = to_terminal(DOC).split("\n")
    assert shown[0] == f"{b}{u}Title{r}"  # a first-level heading is underlined too
    assert shown[2] == (f"Some {b}bold{r}, {i}it{r}, {d}gone{r} and {c}code{r} with a {u}link{r} "
                        "(https://example.org), [alt] and <b>raw</b>.")
    assert f"  {c}code block{r}" in shown and f"  {c}  indented{r}" in shown
    assert to_terminal("## Sub") == f"{b}Sub{r}"
    assert to_terminal("[](https://x.org)") == f"{u}{r} (https://x.org)"  # an empty link still says where
