"""Replicas share one bot's platform-wide budget: each paces itself to its part of the global window, so N of
them together stay within the platform's limit, less a margin; one replica alone keeps the whole window."""

from __future__ import annotations

import dataclasses

from bot.delivery.pacing import SAFETY, Pacer
from bot.messages import ChatRef
from tests.harness import ROOMY


def sends_in_a_moment(pacer: Pacer) -> int:
    """How many sends to distinct chats the pacer lets through at once (none completes meanwhile)."""
    taken = 0
    while pacer.try_take(ChatRef("recording", f"c{taken}"), new_message=True, reserve=0) is not None:
        taken += 1
    return taken


def test_live_replicas_split_the_global_window_between_them() -> None:
    caps = dataclasses.replace(ROOMY, global_window=(30, 1.0))
    live = [1]
    pacer = Pacer(caps, lambda: live[0])
    assert sends_in_a_moment(pacer) == 30  # alone: the whole window (it counts each call until a window after it)
    for replicas in (2, 3, 5):
        live[0] = replicas
        together = replicas * sends_in_a_moment(Pacer(caps, lambda: live[0]))
        assert together <= 30 * SAFETY, (replicas, together)  # the margin is left over as the shared reserve
    live[0] = 100  # more replicas than the window has slots: each still sends, one at a time
    assert sends_in_a_moment(Pacer(caps, lambda: live[0])) == 1
