"""What the PDF child does with the bytes it is given, run here in process (the child is the same function with
rlimits around it): pages from `first` until `chars` are read, never past `max_pages`, a broken file as an error
the parent reports; and the parent's cache, which keeps at most its size."""

from __future__ import annotations

from bot.media.pdf import PdfLimits, PdfReader, extract
from tests.media.test_pdf_child import WORDS, pdf

SHORT = b"(quarterly figures) Tj"


def headings(answer: dict[str, object]) -> list[str]:
    pages = answer["pages"]
    assert isinstance(pages, list)
    return [page.split("\n")[0] for page in pages]


def test_pages_from_first_until_enough_characters_and_never_past_max_pages() -> None:
    data = pdf([SHORT, WORDS], [0, 1, 0, 1])
    assert extract(data, 0, 10, 10) == {"pages": ["[page 1]\nquarterly figures"], "total": 4}
    window = extract(data, 1, 100, 10)
    assert headings(window) == ["[page 2]"] and window["total"] == 4
    capped = extract(data, 0, 10**6, 3)
    assert headings(capped) == ["[page 1]", "[page 2]", "[page 3]"]
    assert capped["total"] == 3


def test_a_file_that_is_no_pdf_is_an_error_for_the_parent() -> None:
    answer = extract(b"%PDF-1.4\nnot really", 0, 100, 10)
    assert set(answer) == {"error"} and answer["error"]


async def test_the_cache_keeps_at_most_its_size() -> None:
    reader = PdfReader(PdfLimits(), cached=1)
    first, second = pdf([SHORT], [0]), pdf([WORDS], [0])
    await reader.text(first, 100)
    await reader.text(second, 100)  # pushes the first out
    await reader.text(second, 100)
    assert reader.started == 2
    assert (await reader.text(first, 100)).pages == ["[page 1]\nquarterly figures"] and reader.started == 3
