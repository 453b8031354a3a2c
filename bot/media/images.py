"""Images for a vision model: verified, bounded, EXIF gone, re-encoded — CPU work, so run in a thread.

Pillow is imported with the first image (~14 MB resident): most processes never see one.
"""

from __future__ import annotations

import base64
import io
from typing import BinaryIO

MAX_PIXELS = 40_000_000  # above this Pillow refuses the file as a decompression bomb


class BadImage(Exception):
    """The bytes are not an image Pillow can read, or it would decode into far too many pixels."""


def normalize(handle: BinaryIO, max_px: int) -> str:
    """Rewrite the open image file in place: long edge ≤ max_px, metadata dropped; returns its new MIME type.

    Re-encoding from pixels is what strips EXIF (location, camera) and any payload after the image data.
    """
    from PIL import Image

    Image.MAX_IMAGE_PIXELS = MAX_PIXELS
    out = io.BytesIO()
    try:
        with Image.open(handle) as probe:
            probe.verify()  # structure check without decoding everything
        handle.seek(0)
        with Image.open(handle) as image:
            image.load()
            wanted = "RGBA" if image.mode in ("RGBA", "LA", "P") else "RGB"
            frame = image if image.mode == wanted else image.convert(wanted)
            frame.thumbnail((max_px, max_px))  # in place: no second full-size copy
            if wanted == "RGBA":
                frame.save(out, "PNG", optimize=True)
            else:
                frame.save(out, "JPEG", quality=85)
    except Image.DecompressionBombError as e:
        raise BadImage("too many pixels") from e
    except Exception as e:  # Pillow raises many types for broken files
        raise BadImage(str(e) or type(e).__name__) from e
    handle.seek(0)
    handle.truncate()
    handle.write(out.getvalue())
    return "image/png" if wanted == "RGBA" else "image/jpeg"


def data_url(data: bytes, mime: str) -> str:
    """The image as a data URL, the form an OpenAI-compatible `image_url` part accepts."""
    return f"data:{mime};base64,{base64.b64encode(data).decode('ascii')}"
