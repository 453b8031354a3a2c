"""The fence's last check, held against every adapter over its real transport: a reply made in a chat's lane
after another replica took the chat over (this one was frozen between the delivery's own check and the request)
never reaches the platform. Each adapter checks it as late as its client allows (bot/httpkit/fence.py)."""

from __future__ import annotations

import pytest

from bot.adapter import Drafting, SendError
from bot.httpkit.fence import answering
from bot.replies import Reply
from bot.store.claims import NotOwner
from tests.adapters.contract.driver import Driver
from tests.adapters.contract.test_contract import declares, dm_chat


async def test_a_reply_from_a_lane_whose_chat_was_taken_over_never_reaches_the_platform(driver: Driver) -> None:
    chat = await dm_chat(driver)
    if not declares(driver, "refuses_sends"):  # a terminal or a browser tab of this process: nobody else answers
        return
    ref = await driver.adapter.send(chat, Reply("still ours"))
    confirmed = 0

    async def taken_over() -> None:
        nonlocal confirmed
        confirmed += 1
        raise NotOwner(f"replica a does not own {chat.chat_id} now")

    token = answering.set(taken_over)
    try:
        with pytest.raises((NotOwner, SendError)):
            await driver.adapter.send(chat, Reply("from a replica that is no longer the owner"))
        if declares(driver, "can_edit"):
            with pytest.raises((NotOwner, SendError)):
                await driver.adapter.edit(ref, Reply("nor this edit"), final=True)
        if isinstance(driver.adapter, Drafting):  # a draft is checked as late as a message
            asked = confirmed
            with pytest.raises((NotOwner, SendError)):
                await driver.adapter.draft(chat, Reply("nor this draft"), None)
            assert confirmed > asked
    finally:
        answering.reset(token)
    assert confirmed >= 1 and await driver.shown(chat) == ["still ours"]
