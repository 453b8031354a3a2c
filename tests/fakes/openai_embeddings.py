"""The fake provider's `/v1/embeddings` (OpenAI's wire): `model` and `input` (a string or a list of strings) in,
one vector per input out, in `data[i].embedding` with `index` i.

The vectors are deterministic and carry meaning the way a real model's do, enough for tests: a hashed bag of
word stems (the first five letters, so "deploy", "deploys" and "deployment" meet; stop words left out), plus a
small table of synonyms mapped to one stem, so "beverage" lands near "tea" without sharing a word.
"""

from __future__ import annotations

import hashlib
import math
import re
from dataclasses import dataclass, field
from typing import Any

from aiohttp import web

from tests.fakes.openai_rules import Refusal, check_key

DIMENSIONS = 1024  # wide enough that unrelated stems seldom share a slot
MAX_INPUTS = 2048  # the real API's limit of inputs per request
SYNONYMS = {  # word → the stem it means, as a model trained on text would place it
    "beverage": "drink", "beverages": "drink", "tea": "drink", "coffee": "drink", "espresso": "drink",
    "puppy": "dog", "canine": "dog", "hound": "dog",
    "invoice": "billi", "payment": "billi", "payments": "billi",
    "release": "deplo", "ship": "deplo", "rollout": "deplo",
    "birthday": "born", "anniversary": "born",
    "allergic": "allergy", "allergies": "allergy", "peanut": "allergy", "peanuts": "allergy",
}
STOPWORDS = frozenset({"a", "an", "the", "and", "or", "of", "in", "on", "at", "to", "is", "are", "was", "has", "have",
                       "i", "my", "me", "you", "your", "what", "which", "who", "any"})
_WORD = re.compile(r"[^\W_]+")


def embedding(text: str) -> list[float]:
    """The unit vector the fake model gives `text`."""
    vector = [0.0] * DIMENSIONS
    for word in _WORD.findall(text.lower()):
        if word in STOPWORDS:
            continue
        stem = SYNONYMS.get(word, word[:5])
        digest = hashlib.blake2b(stem.encode(), digest_size=8).digest()
        vector[int.from_bytes(digest[:4], "little") % DIMENSIONS] += 1.0 if digest[4] & 1 else -1.0
    norm = math.sqrt(sum(x * x for x in vector)) or 1.0
    return [x / norm for x in vector]


@dataclass
class FakeEmbeddings:
    api_key: str | None  # the fake provider's key (None: any key)
    refuse: Any  # a Refusal → the provider's error response
    requests: list[dict[str, Any]] = field(default_factory=list)
    fail_with: int | None = None  # answer this HTTP status instead
    answer_with: str | None = None  # answer this body instead (200, JSON or not): a provider answering oddly

    async def handle(self, request: web.Request) -> web.Response:
        if refusal := check_key(request.headers.get("Authorization"), self.api_key):
            return self.refuse(refusal)
        body = await request.json()
        inputs = body.get("input")
        if isinstance(inputs, str):
            inputs = [inputs]
        if (not isinstance(body.get("model"), str) or not isinstance(inputs, list) or not 1 <= len(inputs) <= MAX_INPUTS
                or not all(isinstance(t, str) and t for t in inputs)):
            return self.refuse(Refusal(400, "'model' and 'input' (non-empty strings, at most 2048) are required"))
        if body.get("encoding_format", "float") != "float":
            return self.refuse(Refusal(400, "this fake answers encoding_format 'float' only"))
        self.requests.append(body)
        if self.fail_with is not None:
            return self.refuse(Refusal(self.fail_with, "embeddings failed"))
        if self.answer_with is not None:
            return web.Response(text=self.answer_with, content_type="application/json")
        data = [{"object": "embedding", "index": i, "embedding": embedding(t)} for i, t in enumerate(inputs)]
        tokens = sum(len(t.split()) for t in inputs)
        return web.json_response({"object": "list", "data": data, "model": body["model"],
                                  "usage": {"prompt_tokens": tokens, "total_tokens": tokens}})
