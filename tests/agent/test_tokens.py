"""Token estimate: CJK weighed per character, other text by length; usage corrects the estimate."""

from __future__ import annotations

from bot.agent.tokens import TokenCounter, estimate_tokens, truncate_to_tokens


def test_english_is_about_four_characters_per_token() -> None:
    assert estimate_tokens("") == 0
    assert estimate_tokens("hello world!") == 3
    assert estimate_tokens("a") == 1


def test_cjk_counts_one_token_per_character() -> None:
    assert estimate_tokens("你好世界") == 4
    assert estimate_tokens("こんにちは") == 5
    assert estimate_tokens("안녕하세요") == 5
    assert estimate_tokens("你好 world") == 2 + 2  # two ideographs + ceil(6 / 4)


def test_same_length_chinese_costs_four_times_english() -> None:
    chinese, english = "测" * 400, "t" * 400
    assert estimate_tokens(chinese) == 400
    assert estimate_tokens(english) == 100


def test_counter_follows_provider_usage() -> None:
    counter = TokenCounter()
    text = "x" * 400  # estimate 100
    assert counter.count(text) == 100
    counter.observe(100, 150)
    assert counter.count(text) == 150
    counter.observe(100, 100)  # smoothed, not jumping straight back
    assert 100 < counter.count(text) < 150
    counter.observe(0, 500)  # nonsense observations are ignored
    counter.observe(100, 0)
    assert 100 < counter.count(text) < 150
    assert counter.count("") == 0


def test_counter_ratio_is_clamped() -> None:
    counter = TokenCounter()
    counter.observe(10, 10_000)
    assert counter.count("x" * 400) == 400


def test_truncate_to_tokens_prefers_line_breaks() -> None:
    text = "first line here\nsecond line is longer than the budget allows"
    cut = truncate_to_tokens(text, 6)
    assert cut == "first line here"
    assert truncate_to_tokens("short", 10) == "short"
    assert truncate_to_tokens("中文文本", 2) == "中文"
    assert truncate_to_tokens("anything", 0) == ""
