"""sqlite-vec in the SQLite store's connection, and the Python stand-in for a SQLite that cannot load it: the
stand-in must rank exactly as the extension does, or memories would be recalled in another order there."""

from __future__ import annotations

import logging
import random
import sqlite3

import pytest
import sqlite_vec

from bot.store.memories import pack, unit
from bot.store.sqlite.vectors import load_vectors

DISTANCE = "SELECT vec_distance_cosine(?, ?)"


def vectors(count: int, width: int) -> list[bytes]:
    rng = random.Random(width)
    return [pack(unit([rng.uniform(-1, 1) for _ in range(width)])) for _ in range(count)]


@pytest.fixture
def extension() -> sqlite3.Connection:
    conn = sqlite3.connect(":memory:")
    assert load_vectors(conn) == str(conn.execute("SELECT vec_version()").fetchone()[0]) != "python"
    return conn


@pytest.fixture
def stand_in(monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture) -> sqlite3.Connection:
    """A connection whose SQLite finds no extension to load (as a build without sqlite-vec's library)."""
    monkeypatch.setattr(sqlite_vec, "loadable_path", lambda: "/nonexistent/vec0")
    conn = sqlite3.connect(":memory:")
    with caplog.at_level(logging.WARNING, "bothub.store"):
        assert load_vectors(conn) == "python"
    assert "ranked by a Python function" in caplog.text
    with pytest.raises(sqlite3.OperationalError):
        conn.execute("SELECT vec_version()")
    return conn


def test_the_stand_in_gives_the_extensions_distances(extension: sqlite3.Connection,
                                                     stand_in: sqlite3.Connection) -> None:
    for width in (3, 64):
        query, *memories = vectors(12, width)
        ours = [stand_in.execute(DISTANCE, (query, m)).fetchone()[0] for m in memories]
        theirs = [extension.execute(DISTANCE, (query, m)).fetchone()[0] for m in memories]
        assert ours == pytest.approx(theirs, abs=1e-5)
        assert sorted(range(len(ours)), key=ours.__getitem__) == sorted(range(len(theirs)), key=theirs.__getitem__)
    same = vectors(1, 8)[0]
    assert stand_in.execute(DISTANCE, (same, same)).fetchone()[0] == pytest.approx(0.0, abs=1e-6)


def test_the_stand_in_has_no_distance_for_a_missing_or_mismatched_vector(stand_in: sqlite3.Connection) -> None:
    short, long = vectors(1, 3)[0], vectors(1, 4)[0]
    assert stand_in.execute(DISTANCE, (short, long)).fetchone()[0] is None
    assert stand_in.execute(DISTANCE, (None, short)).fetchone()[0] is None
    assert stand_in.execute(DISTANCE, (short, None)).fetchone()[0] is None
