"""What a file's first bytes say it is: a claimed type the bytes contradict is refused."""

from __future__ import annotations

_SIGNATURES: tuple[tuple[bytes, int, str], ...] = (  # (magic, offset, MIME)
    (b"\xff\xd8\xff", 0, "image/jpeg"),
    (b"\x89PNG\r\n\x1a\n", 0, "image/png"),
    (b"GIF87a", 0, "image/gif"),
    (b"GIF89a", 0, "image/gif"),
    (b"WEBP", 8, "image/webp"),
    (b"BM", 0, "image/bmp"),
    (b"%PDF-", 0, "application/pdf"),
    (b"OggS", 0, "audio/ogg"),
    (b"ID3", 0, "audio/mpeg"),
    (b"fLaC", 0, "audio/flac"),
    (b"WAVE", 8, "audio/wav"),
    (b"ftyp", 4, "video/mp4"),
    (b"\x1aE\xdf\xa3", 0, "video/webm"),
    (b"PK\x03\x04", 0, "application/zip"),
)
HEAD_BYTES = 16  # enough for every signature above
# claimed types whose bytes we can check; anything else (text, office files, …) is taken as claimed
_CHECKED_FAMILIES = ("image/", "application/pdf")


def sniff(head: bytes) -> str | None:
    """The MIME type the first bytes show, or None when they match no known signature."""
    for magic, offset, mime in _SIGNATURES:
        if head[offset : offset + len(magic)] == magic:
            return mime
    return None


def contradicts(claimed: str, head: bytes) -> bool:
    """True when the file claims a type we can check (an image, a PDF) and its bytes are something else."""
    claimed = claimed.lower()
    if not claimed.startswith(_CHECKED_FAMILIES):
        return False
    found = sniff(head)
    if claimed.startswith("image/"):
        return found is None or not found.startswith("image/")
    return found != claimed
