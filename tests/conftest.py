"""Shared fixtures. Everything listens on 127.0.0.1 port 0."""

from __future__ import annotations

import faulthandler
import functools
import os
import sys
import threading
from collections.abc import AsyncIterator, Callable, Generator, Iterator
from typing import Any

import pytest
import pytest_asyncio

from bot.ops import eventloop
from tests.fakes import budgets
from tests.fakes.openai_api import FakeOpenAI
from tests.postgres import PostgresServer

# python-telegram-bot's opt-in to timedelta durations, so its deprecation warning (an error under
# `filterwarnings = error`) never fires inside the SDK; set here so plain `pytest` runs like `make test`.
# The integer form production gets without it has its own test (test_outbound.py).
os.environ.setdefault("PTB_TIMEDELTA", "true")


def pytest_asyncio_loop_factories(config: pytest.Config, item: pytest.Item) -> dict[str, Callable[[], Any]]:
    """The tests run on the loop `bothub run` runs on (uvloop where it is installed).

    One factory object for the whole run: pytest-asyncio parametrizes by it, and a new bound method per test
    would end every module-scoped fixture (a shared browser, a shared hub) after its first test."""
    return {"bothub": _new_loop()}


@functools.cache
def _new_loop() -> Callable[[], Any]:
    return eventloop.policy().new_event_loop


LONG_FIRST = ("tests/replicas/", "tests/reliability/")  # clusters of real processes: up to 100 s a test


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """The long multi-process tests start first, so under `make test`'s workers the run does not end waiting
    on one of them started last (the sort is stable: every other test keeps its order)."""
    items.sort(key=lambda item: not item.nodeid.startswith(LONG_FIRST))


WATCHDOG_GRACE = 15.0  # seconds past a test's own timeout


@pytest.hookimpl(wrapper=True, tryfirst=True)
def pytest_runtest_protocol(item: pytest.Item, nextitem: pytest.Item | None) -> Generator[None, object, object]:
    """The last word on a hung test. pytest-timeout stands down once a test has failed (so does pytest's own
    faulthandler timeout): a teardown that then waits for ever, e.g. on a child process a failed test left
    running, hung the whole run. Past its timeout and a grace, every thread's stack is printed and the process
    ends; under `make test`'s workers that worker is replaced and the test reported as crashed."""
    marker = item.get_closest_marker("timeout")
    timeout = float(marker.args[0] if marker and marker.args else item.config.getini("timeout") or 0)
    if timeout <= 0:  # pytest-timeout's "no timeout"
        return (yield)
    limit, done = timeout + WATCHDOG_GRACE, threading.Event()

    def watch() -> None:
        if not done.wait(limit):
            print(f"\n{item.nodeid} ran past its timeout and {WATCHDOG_GRACE:g} s more: ending the process",
                  file=sys.stderr, flush=True)
            faulthandler.dump_traceback(all_threads=True)
            os._exit(1)

    threading.Thread(target=watch, name="test-watchdog", daemon=True).start()
    try:
        return (yield)
    finally:
        done.set()


@pytest.fixture(autouse=True)
def platform_budgets() -> Iterator[None]:
    """Fails a test whose platform fakes saw the bot go over a platform's budget (tests/fakes/budgets.py),
    even where the bot survived the 429 or its SDK waited."""
    budgets.MADE.clear()
    yield
    fakes, budgets.MADE[:] = list(budgets.MADE), []
    assert budgets.unexpected(fakes) == [], "the bot went over a platform's budget"


@pytest_asyncio.fixture
async def fake() -> AsyncIterator[FakeOpenAI]:
    """A scripted OpenAI-compatible server; with an empty script it echoes the last user message."""
    server = FakeOpenAI()
    await server.start()
    yield server
    await server.stop()


@pytest.fixture(scope="session")
def postgres() -> Iterator[PostgresServer]:
    """One throwaway PostgreSQL server for the whole run, started on first use; tests take fresh databases."""
    server = PostgresServer()
    try:
        server.start()
        yield server
    finally:
        server.stop()
