"""Soak test (not in CI): many chats through the real hub while the platform and the LLM misbehave.

The adapter randomly raises RateLimited on sends and edits; the fake LLM randomly answers 500 (the SDK
retries those before the stream, as in production). Every user message must end with exactly one answer
or a failure notice, and each chat's answers must come in the order its messages were sent.
"Lost" = a message with neither an answer nor a failure notice (a failure shortly after one the chat was
already told about stays quiet by design and is reported apart). Run: `python -m bench.soak`.
"""

from __future__ import annotations

import argparse
import asyncio
import dataclasses
import logging
import random
import sys
import tempfile
import time
from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from bot.adapter import RateLimited
from bot.app import App
from bot.messages import ChatRef, SentRef
from bot.ops import eventloop
from bot.replies import Reply
from tests.fakes.openai_api import Error, FakeOpenAI, Step, Text
from tests.harness import ROOMY, RecordingAdapter, answered_id, make_config

FAILURE_MARK = "model provider failed"
BUSY_MARK = "still working on earlier messages"


class UnreliableAdapter(RecordingAdapter):
    """A RecordingAdapter whose platform says 429 now and then, before anything is shown."""

    def __init__(self, rng: random.Random, rate_limit_p: float) -> None:
        super().__init__(dataclasses.replace(ROOMY, global_window=(100_000, 1.0)))
        self.rng = rng
        self.rate_limit_p = rate_limit_p
        self.rate_limited = 0

    def _maybe_429(self) -> None:
        if self.rng.random() < self.rate_limit_p:
            self.rate_limited += 1
            raise RateLimited(retry_after=0.01)

    async def send(self, chat: ChatRef, reply: Reply, *, final: bool = True) -> SentRef:
        self._maybe_429()
        return await super().send(chat, reply, final=final)

    async def edit(self, ref: SentRef, reply: Reply, *, final: bool) -> None:
        self._maybe_429()
        await super().edit(ref, reply, final=final)


@dataclass
class Report:
    messages: int = 0
    answered: int = 0
    failure_notices: int = 0
    quiet_after_notice: int = 0  # failed while the chat's earlier failure notice still stands (one per outage)
    busy: int = 0
    lost: int = 0
    duplicated: int = 0
    out_of_order: int = 0
    rate_limited: int = 0
    llm_500s: int = 0
    seconds: float = 0.0

    @property
    def ok(self) -> bool:
        return self.lost == self.duplicated == self.out_of_order == 0


def check(adapter: UnreliableAdapter, sent: dict[str, list[tuple[str, str]]], report: Report) -> None:
    """Match what each chat finally shows against what was asked there, in order."""
    shown: dict[str, list[tuple[str | None, str]]] = {}
    for chat, reply in adapter.visible.values():  # in send order
        shown.setdefault(chat.chat_id, []).append((answered_id(chat), reply.text))
    for chat_id, asked in sent.items():
        replies = shown.get(chat_id, [])
        answers = Counter(text for _, text in replies)
        notices = {reply_to for reply_to, text in replies if FAILURE_MARK in text}
        busy = {reply_to for reply_to, text in replies if BUSY_MARK in text}
        positions = {text: i for i, (_, text) in enumerate(replies)}
        last = -1
        for message_id, text in asked:
            report.messages += 1
            if answers[text] > 1:
                report.duplicated += 1
            if answers[text]:
                report.answered += 1
                if positions[text] < last:
                    report.out_of_order += 1
                last = positions[text]
            elif message_id in notices:
                report.failure_notices += 1
            elif notices and any(mid in notices for mid, _ in asked[:asked.index((message_id, text))]):
                report.quiet_after_notice += 1
            elif message_id in busy:
                report.busy += 1
            else:
                report.lost += 1


async def soak(messages: int, chats: int, rate_limit_p: float, llm_error_p: float, seed: int) -> Report:
    rng = random.Random(seed)
    report = Report()

    def responder(body: dict[str, Any]) -> Step:
        if rng.random() < llm_error_p:
            report.llm_500s += 1
            return Error(500, message="random soak failure")
        return Text(body["messages"][-1]["content"], chunks=3)

    llm = FakeOpenAI(responder=responder)
    await llm.start()
    adapter = UnreliableAdapter(rng, rate_limit_p)
    sent: dict[str, list[tuple[str, str]]] = {f"chat{c}": [] for c in range(chats)}
    with tempfile.TemporaryDirectory() as tmp:
        cfg, env = make_config(Path(tmp), llm.base_url, {"log_level": "WARNING", "max_queue": messages})
        cfg.llm.max_retries = 3  # production retries 5xx before the stream; so do we
        app = App(cfg, env, adapters=(adapter,))
        await app.start()
        started = time.monotonic()
        try:
            for n in range(messages):
                chat_id = f"chat{n % chats}"
                text = f"{chat_id} message {len(sent[chat_id])} nonce {rng.getrandbits(32):08x}"
                message_id = f"m{n}"
                sent[chat_id].append((message_id, text))
                await adapter.say(text, chat_id=chat_id, message_id=message_id)
                if n % chats == chats - 1:
                    await asyncio.sleep(0)  # let a round of chats start before the next arrives
            await app.hub.idle()
        finally:
            report.seconds = time.monotonic() - started
            await app.stop()
            await llm.stop()
    report.rate_limited = adapter.rate_limited
    check(adapter, sent, report)
    return report


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--messages", type=int, default=10_000)
    parser.add_argument("--chats", type=int, default=500)
    parser.add_argument("--rate-limit-p", type=float, default=0.05, help="chance a send/edit raises RateLimited")
    parser.add_argument("--llm-error-p", type=float, default=0.05, help="chance an LLM request answers 500")
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.ERROR)
    report = eventloop.run(soak(args.messages, args.chats, args.rate_limit_p, args.llm_error_p, args.seed))
    for name, value in vars(report).items():
        print(f"{name:>18}: {value:.1f}" if isinstance(value, float) else f"{name:>18}: {value}")
    print(f"{'throughput':>18}: {report.messages / max(report.seconds, 1e-9):.0f} messages/s")
    print("OK: nothing lost, duplicated or out of order" if report.ok else "FAILED")
    return 0 if report.ok else 1


if __name__ == "__main__":
    sys.exit(main())
