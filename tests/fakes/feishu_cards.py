"""Card JSON 2.0 the way Feishu's open platform validates it, for the fake.

A refused card is HTTP 400 with code 230099 and the platform's message shape, e.g.
"Failed to create card content, ext=ErrCode: 11310; ErrMsg: ...; ErrorValue: ...;". What is checked:
the card's top-level keys; every component tag is one JSON 2.0 knows (1.0's `action` and `note` are
gone in 2.0); required fields (markdown content, button text, plain_text titles); buttons act through
`behaviors` (callback with a value, open_url with a URL); a weighted column's weight is 1 to 5; element_id
is a letter then letters, digits or '_' (at most 20), unique in the card, as CardKit streaming addresses
elements by it; at most 200 components. Size (30 KB) is checked by the server, which knows the wire bytes.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any

CARD_CONTENT_ERROR = 230099
CARD_ERR_CODE = 11310
ELEMENT_ID = re.compile(r"[A-Za-z][A-Za-z0-9_]{0,19}")
MAX_COMPONENTS = 200
TOP_LEVEL = {"schema", "config", "card_link", "header", "body"}
TAGS = {"markdown", "div", "hr", "img", "img_combination", "column_set", "column", "button",
        "collapsible_panel", "form", "interactive_container", "table", "chart", "person", "person_list",
        "avatar", "input", "select_static", "multi_select_static", "select_person", "multi_select_person",
        "select_img", "overflow", "date_picker", "picker_time", "picker_datetime", "checker", "audio"}
TEXT_TAGS = {"plain_text", "lark_md"}
BEHAVIORS = {"callback": "value", "open_url": "default_url", "form_action": "behavior"}
TEMPLATES = {"blue", "wathet", "turquoise", "green", "yellow", "orange", "red", "carmine", "violet", "purple",
             "indigo", "grey", "default"}


def card_error(problem: str, value: str) -> str:
    return f"Failed to create card content, ext=ErrCode: {CARD_ERR_CODE}; ErrMsg: {problem}; ErrorValue: {value};"


def check_card(card: Any) -> str | None:
    """None for a card Feishu accepts; else the error message it answers with."""
    if not isinstance(card, dict) or card.get("schema") != "2.0":
        return card_error("card schema must be 2.0", "schema")
    if extra := sorted(set(card) - TOP_LEVEL):
        return card_error("unknown card field", extra[0])
    body = card.get("body")
    if not isinstance(body, dict) or not isinstance(body.get("elements"), list):
        return card_error("body.elements is required", "body")
    if (problem := _check_header(card.get("header"))) is not None:
        return problem
    seen_ids: set[str] = set()
    components = list(walk(body["elements"]))
    if len(components) > MAX_COMPONENTS:
        return card_error("card component number over limit", str(len(components)))
    for element in components:
        if (problem := _check_component(element, seen_ids)) is not None:
            return problem
    return None


def walk(elements: list[Any]) -> Iterator[Any]:
    """Every component, nested ones (in columns, panels) after their container."""
    for element in elements:
        yield element
        if isinstance(element, dict):
            for key in ("elements", "columns"):
                if isinstance(element.get(key), list):
                    yield from walk(element[key])


def _check_header(header: Any) -> str | None:
    if header is None:
        return None
    title = header.get("title") if isinstance(header, dict) else None
    if not _is_text(title):
        return card_error("header.title must be a plain_text or lark_md text", "header.title")
    if header.get("template", "default") not in TEMPLATES:
        return card_error("unknown header template", str(header.get("template")))
    return None


def _is_text(obj: Any) -> bool:
    return isinstance(obj, dict) and obj.get("tag") in TEXT_TAGS and isinstance(obj.get("content"), str)


def _check_component(element: Any, seen_ids: set[str]) -> str | None:
    tag = element.get("tag") if isinstance(element, dict) else None
    if tag not in TAGS:
        return card_error("unknown tag", str(tag))
    element_id = element.get("element_id")
    if element_id is not None:
        if not isinstance(element_id, str) or not ELEMENT_ID.fullmatch(element_id):
            return card_error("invalid element_id", str(element_id))
        if element_id in seen_ids:
            return card_error("element_id repeated", element_id)
        seen_ids.add(element_id)
    if tag == "markdown" and not isinstance(element.get("content"), str):
        return card_error("markdown content is required", "content")
    if tag == "column_set" and not all(isinstance(c, dict) and c.get("tag") == "column"
                                       for c in element.get("columns", [])):
        return card_error("column_set holds only columns", "columns")
    if tag == "column" and element.get("width") == "weighted" and element.get("weight") not in range(1, 6):
        return card_error("a weighted column's weight is an integer from 1 to 5", str(element.get("weight")))
    if tag == "button":
        return _check_button(element)
    return None


def _check_button(button: dict[str, Any]) -> str | None:
    if not _is_text(button.get("text")):
        return card_error("button text is required", "text")
    behaviors = button.get("behaviors")
    if not isinstance(behaviors, list) or not behaviors:
        return card_error("button needs behaviors in schema 2.0", "behaviors")
    for behavior in behaviors:
        kind = behavior.get("type") if isinstance(behavior, dict) else None
        if kind not in BEHAVIORS or behavior.get(BEHAVIORS[kind]) in (None, "", {}):
            return card_error("invalid button behavior", str(kind))
    return None
