"""Token estimates without a tokenizer download: CJK weighed per character, corrected by provider usage.

tiktoken fetches its tables on first use (fails offline) and is exact only for OpenAI models, so we
estimate and let the `usage` numbers the provider returns pull the estimate toward reality.
"""

from __future__ import annotations

import re
from functools import lru_cache

# CJK ideographs, kana, Hangul, CJK punctuation and full-width forms: roughly one token each.
_CJK = re.compile(
    "[\u2e80-\u2fdf\u3000-\u30ff\u3100-\u31ff\u3400-\u4dbf\u4e00-\u9fff"
    "\uac00-\ud7af\uf900-\ufaff\ufe30-\ufe4f\uff00-\uffef\U00020000-\U0002fa1f]"
)
CHARS_PER_TOKEN = 4  # other text: English and code average about four characters per token


@lru_cache(maxsize=8192)
def estimate_tokens(text: str) -> int:
    """Cached: each turn re-counts the same history strings, whose hashes Python keeps on the object."""
    if not text:
        return 0
    cjk = len(_CJK.findall(text))
    return cjk + -(-(len(text) - cjk) // CHARS_PER_TOKEN)


def truncate_to_tokens(text: str, budget: int) -> str:
    """The longest prefix of `text` whose estimate fits `budget`, preferring to end at a line break."""
    if estimate_tokens(text) <= budget:
        return text
    if budget <= 0:
        return ""
    used = 0.0
    cut = len(text)
    for i, ch in enumerate(text):
        used += 1.0 if _CJK.match(ch) else 1 / CHARS_PER_TOKEN
        if used > budget:
            cut = i
            break
    line_end = text.rfind("\n", 0, cut)
    if line_end > cut // 2:
        cut = line_end
    return text[:cut].rstrip()


class TokenCounter:
    """Estimates scaled by a running ratio of the provider's real prompt tokens to our estimate."""

    MIN_RATIO, MAX_RATIO = 0.25, 4.0
    SMOOTHING = 0.3  # weight of the newest observation

    def __init__(self) -> None:
        self.ratio = 1.0
        self._observed = False

    def observe(self, estimated: int, actual_prompt_tokens: int) -> None:
        if estimated <= 0 or actual_prompt_tokens <= 0:
            return
        sample = min(max(actual_prompt_tokens / estimated, self.MIN_RATIO), self.MAX_RATIO)
        self.ratio = sample if not self._observed else (1 - self.SMOOTHING) * self.ratio + self.SMOOTHING * sample
        self._observed = True

    def count(self, text: str) -> int:
        estimate = estimate_tokens(text)
        return 0 if estimate == 0 else max(1, round(estimate * self.ratio))
