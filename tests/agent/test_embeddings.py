"""The embedder on the provider's /embeddings (the fake's wire): what it sends, the unit vector it returns, and
an answer that is no list of numbers as an LLMError the memory tools turn into a keyword search."""

from __future__ import annotations

import json
import math

import pytest

from bot.agent.embeddings import MAX_INPUT
from bot.agent.events import FailureKind
from bot.agent.provider import LLMError
from tests.agent.conftest import MakeLLM
from tests.fakes.openai_api import FakeOpenAI
from tests.fakes.openai_embeddings import embedding


async def test_one_text_goes_up_cut_to_the_input_cap_and_comes_back_unit_length(make_llm: MakeLLM,
                                                                               fake: FakeOpenAI) -> None:
    embed = (await make_llm()).embedder("fake-embed")
    assert embed is not None
    assert await embed("green tea") == pytest.approx(embedding("green tea"))
    await embed("x" * (MAX_INPUT + 500))
    first, second = fake.embeddings.requests
    assert first == {"model": "fake-embed", "input": ["green tea"], "encoding_format": "float"}
    assert second["input"] == ["x" * MAX_INPUT]
    fake.embeddings.answer_with = json.dumps({"data": [{"embedding": [3, 4.0]}]})
    assert await embed("scaled") == pytest.approx([0.6, 0.8])  # a model that does not normalise is normalised
    assert math.isclose(math.hypot(*await embed("again")), 1.0)


async def test_no_model_no_embedder(make_llm: MakeLLM) -> None:
    assert (await make_llm()).embedder(None) is None


@pytest.mark.parametrize("answer", ["not json", "{}", '{"data": []}', '{"data": [{"embedding": []}]}',
                                    '{"data": [{"embedding": [0.1, "x"]}]}', '{"data": [{"vector": [1]}]}',
                                    '{"data": "nothing"}'])
async def test_an_answer_that_is_no_list_of_numbers_is_an_llm_error(make_llm: MakeLLM, fake: FakeOpenAI,
                                                                    answer: str) -> None:
    embed = (await make_llm()).embedder("fake-embed")
    assert embed is not None
    fake.embeddings.answer_with = answer
    with pytest.raises(LLMError, match="unexpected /embeddings answer") as caught:
        await embed("green tea")
    assert caught.value.kind == FailureKind.OTHER
