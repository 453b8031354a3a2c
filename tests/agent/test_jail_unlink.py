"""The jail's own rules at the edges (bot/jail.py): a NUL in a path leads out, the folder itself is no file to
open, and `unlink` removes exactly one name below the folder — never a folder, never through a link, never
outside — answering whether it did."""

from __future__ import annotations

from pathlib import Path

import pytest

from bot import jail


def test_a_nul_leads_out_and_the_folder_itself_is_no_file(tmp_path: Path) -> None:
    with pytest.raises(jail.Jailed) as nul:
        jail.parts("notes\x00.txt")
    assert nul.value.why is jail.Why.OUTSIDE
    for folder in ("", ".", "sub/.."):
        with pytest.raises(jail.Jailed) as special:
            jail.open_file(tmp_path, folder)
        assert special.value.why is jail.Why.SPECIAL, folder


def test_unlink_removes_one_name_below_the_folder_and_nothing_else(tmp_path: Path) -> None:
    root, outside = tmp_path / "chat", tmp_path / "outside.txt"
    (root / "sub").mkdir(parents=True)
    (root / "sub" / "a.txt").write_text("a", encoding="utf-8")
    (root / "b.txt").write_text("b", encoding="utf-8")
    outside.write_text("keep", encoding="utf-8")
    (root / "link.txt").symlink_to(outside)
    (root / "linkdir").symlink_to(root / "sub")
    for kept in ("", ".", "sub", "missing.txt", "../outside.txt", "/etc/hostname", "linkdir/a.txt"):
        assert jail.unlink(root, kept) is False, kept
    assert (root / "sub" / "a.txt").exists() and outside.read_text(encoding="utf-8") == "keep"
    for gone in ("b.txt", "sub/a.txt", "link.txt"):
        assert jail.unlink(root, gone) is True, gone
    assert sorted(p.name for p in root.iterdir()) == ["linkdir", "sub"] and list((root / "sub").iterdir()) == []
    assert outside.read_text(encoding="utf-8") == "keep"  # the link went, its target stays
