"""A PDF's text, read in a child process with CPU, memory and wall-clock limits, only as far as asked.

One small PDF can cost pypdf minutes of CPU (a content stream of a million empty text operations, shared
by every page). In a thread it would pin a CPU that /stop cannot take back and fill the shared pool; a
child process is killed the moment its run is stopped or its limits are hit, and at most `workers`
children run at once. Pages are read in order only until the text asked for is there, and what was read
is cached by the file's hash, so asking for the next page continues where the last call stopped.

Run as `python -m bot.media.pdf FIRST CHARS MAX_PAGES CPU MEMORY`: the PDF on stdin, JSON on stdout.
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import io
import json
import os
import resource
import sys
from collections import OrderedDict
from dataclasses import dataclass, field
from pathlib import Path

PACKAGE_ROOT = str(Path(__file__).resolve().parents[2])  # where `bot` is importable from, for the child
NO_MEMORY = 3  # the child's exit code when it ran out of its address space


class PdfFailed(Exception):
    """The PDF could not be read within the limits, or is broken; the message is for the model."""


@dataclass(frozen=True)
class PdfLimits:
    cpu_seconds: int = 20
    memory_bytes: int = 768 * 1024 * 1024  # address space of the child, pypdf and Python included
    wall_seconds: float = 30.0
    max_pages: int = 2000
    workers: int = 2  # children at once, for the whole process


@dataclass
class PdfText:
    """The pages read so far (each "[page n]\\n…"), and how many the PDF has."""

    pages: list[str] = field(default_factory=list)
    total: int = -1  # not known before the first read

    @property
    def complete(self) -> bool:
        return 0 <= self.total <= len(self.pages)

    @property
    def text(self) -> str:
        return "\n\n".join(self.pages)


class PdfReader:
    """Bounded PDF text extraction with a cache by content hash (see the module docstring)."""

    def __init__(self, limits: PdfLimits | None = None, cached: int = 16) -> None:
        self.limits = limits or PdfLimits()
        self.started = 0  # children started so far: what the cache saved is visible here
        self._slots = asyncio.Semaphore(self.limits.workers)
        self._cache: OrderedDict[str, PdfText] = OrderedDict()
        self._cached = cached

    async def text(self, data: bytes, chars: int) -> PdfText:
        """At least `chars` characters of the PDF's text, or all of it when it has fewer."""
        digest = hashlib.sha256(data).hexdigest()
        known = self._cache.pop(digest, None) or PdfText()
        if len(known.text) < chars and not known.complete:
            more = await self._extract(data, len(known.pages), chars - len(known.text))
            known = PdfText(known.pages + more.pages, more.total)
        self._cache[digest] = known
        while len(self._cache) > self._cached:
            self._cache.popitem(last=False)
        return known

    async def _extract(self, data: bytes, first: int, chars: int) -> PdfText:
        limits = self.limits
        argv = [sys.executable, "-m", "bot.media.pdf", str(first), str(chars), str(limits.max_pages),
                str(limits.cpu_seconds), str(limits.memory_bytes)]
        async with self._slots:
            self.started += 1
            proc = await asyncio.create_subprocess_exec(
                *argv, stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.PIPE,
                stderr=asyncio.subprocess.DEVNULL, env={"PYTHONPATH": PACKAGE_ROOT, "LANG": "C.UTF-8"})
            try:
                async with asyncio.timeout(limits.wall_seconds):
                    out, _ = await proc.communicate(data)
            except TimeoutError:
                raise PdfFailed(f"reading the PDF took longer than {limits.wall_seconds:g} s; it was stopped") from None
            finally:
                if proc.returncode is None:  # timed out, or the run was stopped (/stop, the run's deadline)
                    with contextlib.suppress(ProcessLookupError):
                        proc.kill()
                    await asyncio.shield(proc.wait())
        return _parsed(proc.returncode, out, limits)


def _parsed(code: int | None, out: bytes, limits: PdfLimits) -> PdfText:
    if code == NO_MEMORY:
        raise PdfFailed(f"the PDF needs more than {limits.memory_bytes // 2**20} MB to read; it was stopped")
    if code is not None and code < 0:  # SIGXCPU, or SIGKILL when it kept going past the soft limit
        raise PdfFailed(f"the PDF needs more than {limits.cpu_seconds} s of CPU to read; it was stopped")
    try:
        answer = json.loads(out)
    except ValueError:
        raise PdfFailed("the PDF reader failed") from None
    if "error" in answer:
        raise PdfFailed(f"the PDF cannot be read ({answer['error']})")
    return PdfText(list(answer["pages"]), int(answer["total"]))


def _limit_self(cpu_seconds: int, memory_bytes: int) -> None:
    """Limits set before the PDF is read: the soft CPU limit sends SIGXCPU, the hard one a second later kills."""
    resource.setrlimit(resource.RLIMIT_CPU, (cpu_seconds, cpu_seconds + 1))
    resource.setrlimit(resource.RLIMIT_AS, (memory_bytes, memory_bytes))
    resource.setrlimit(resource.RLIMIT_CORE, (0, 0))


def extract(data: bytes, first: int, chars: int, max_pages: int) -> dict[str, object]:
    """Pages from index `first` on, until `chars` characters were read; the child's whole job."""
    from pypdf import PdfReader as Reader
    from pypdf.errors import PdfReadError

    try:
        reader = Reader(io.BytesIO(data))
        total = min(len(reader.pages), max_pages)
        pages, read = [], 0
        for index in range(first, total):
            page = f"[page {index + 1}]\n{reader.pages[index].extract_text() or ''}"
            pages.append(page)
            read += len(page) + 2
            if read >= chars:
                break
    except (PdfReadError, RecursionError, ValueError, KeyError, TypeError, AttributeError) as e:
        return {"error": str(e) or type(e).__name__}  # pypdf raises many types for broken files
    return {"pages": pages, "total": total}


def main(args: list[str]) -> int:
    first, chars, max_pages, cpu, memory = (int(a) for a in args)
    _limit_self(cpu, memory)
    try:
        answer = extract(sys.stdin.buffer.read(), first, chars, max_pages)
        sys.stdout.write(json.dumps(answer))
    except MemoryError:
        os._exit(NO_MEMORY)  # no clean-up: there is no memory left to do it with
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
