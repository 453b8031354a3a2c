"""A graceful drain loses nothing: a message that reaches a replica while it stops (a balancer still sends it
webhooks) is kept in the inbox, not acknowledged unstored, and is answered by the chat's next owner — here the
next start of the one process. (The long chaos run, bench/chaos.py, lost webhooks that way.)"""

from __future__ import annotations

from pathlib import Path

from tests.fakes.openai_api import FakeOpenAI
from tests.harness import RecordingAdapter, running_app, wait_for


async def test_a_message_arriving_during_shutdown_is_answered_after_the_restart(tmp_path: Path,
                                                                                fake: FakeOpenAI) -> None:
    adapter = RecordingAdapter()
    async with running_app(tmp_path, fake.base_url, adapters=(adapter,)) as app:
        await adapter.say("before", "c1", message_id="1")
        await wait_for(lambda: adapter.texts("c1") == ["before"])
        await app.hub.shutdown(0)  # the drain has begun: nothing new is answered here
        await adapter.say("during", "c1", message_id="2")
        assert adapter.texts("c1") == ["before"]
    again = RecordingAdapter()
    async with running_app(tmp_path, fake.base_url, adapters=(again,)):
        await wait_for(lambda: again.texts("c1") == ["during"])
