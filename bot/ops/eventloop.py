"""The event loop every bothub process runs on: uvloop where it is installed (Linux and macOS), else asyncio's.

uvloop keeps asyncio's API and runs the loop, its sockets and transports in C (libuv). A thousand answers
starting at once spend most of the hub's time before their model requests are out in that machinery
(connection set-up, callbacks, transports): `bench/concurrency.py` measured 3.16–3.29 s with asyncio's loop and
3.03–3.19 s with uvloop, 10 % less hub CPU. Windows has no uvloop; asyncio's loop does the same work there.
"""

from __future__ import annotations

import asyncio
from collections.abc import Coroutine
from typing import Any, TypeVar

T = TypeVar("T")


def policy() -> asyncio.AbstractEventLoopPolicy:
    """uvloop's policy when it is installed (pyproject.toml installs it wherever it exists), else asyncio's;
    runners that make their own loops (the test suite) take it too."""
    try:
        import uvloop
    except ImportError:
        return asyncio.DefaultEventLoopPolicy()
    chosen: asyncio.AbstractEventLoopPolicy = uvloop.EventLoopPolicy()
    return chosen


def run(main: Coroutine[Any, Any, T]) -> T:
    """`asyncio.run` on the loop `policy` makes."""
    with asyncio.Runner(loop_factory=policy().new_event_loop) as runner:
        return runner.run(main)
