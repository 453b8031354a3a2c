"""The fake's Feishu frequency limits (used by bench/feishu_e2e.py): which call each rule refuses, and when."""

from __future__ import annotations

from tests.fakes.feishu_limits import FeishuLimits


class Clock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def test_five_sends_a_second_into_one_chat_then_429_until_the_second_has_passed() -> None:
    clock = Clock()
    limits = FeishuLimits(clock)
    assert [limits.allow("send", "oc_a") for _ in range(6)] == [True] * 5 + [False]
    assert limits.allow("send", "oc_b")  # another chat has its own five
    clock.now += 0.999
    assert not limits.allow("send", "oc_a")
    clock.now += 0.002
    assert limits.allow("send", "oc_a")
    assert dict(limits.causes) == {"send per chat": 2}


def test_fifty_sends_a_second_per_app_and_a_refusal_spends_nothing() -> None:
    limits = FeishuLimits(Clock())
    assert all(limits.allow("send", f"oc_{i}") for i in range(50))
    assert not limits.allow("send", "oc_new")
    assert limits.allow("update", "om_1")  # updates have their own app quota
    assert dict(limits.causes) == {"send per app": 1}


def test_ten_operations_a_second_on_one_card_and_five_updates_of_one_message() -> None:
    limits = FeishuLimits(Clock())
    assert [limits.allow("cardkit", "card1") for _ in range(11)] == [True] * 10 + [False]
    assert [limits.allow("update", "om_1") for _ in range(6)] == [True] * 5 + [False]
    assert dict(limits.causes) == {"cardkit per card": 1, "update per message": 1}
