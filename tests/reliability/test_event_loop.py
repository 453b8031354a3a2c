"""bothub runs on uvloop (bot/ops/eventloop.py), and so does the test suite: what is tested is what runs."""

from __future__ import annotations

import asyncio

import uvloop

from bot.ops import eventloop


async def _loop_type() -> type:
    return type(asyncio.get_running_loop())


def test_run_uses_uvloop() -> None:
    assert eventloop.run(_loop_type()) is uvloop.Loop


async def test_the_suite_runs_on_the_same_loop() -> None:
    assert isinstance(asyncio.get_running_loop(), uvloop.Loop)
