"""A bounded map for what an adapter remembers of recent messages (which chat a card is in, a reply's
webhook): the oldest entries go first, so memory stays flat however long the hub runs."""

from __future__ import annotations

from collections import OrderedDict
from typing import TypeVar

V = TypeVar("V")


class Recent(OrderedDict[str, V]):
    def __init__(self, size: int = 2000) -> None:
        super().__init__()
        self.size = size

    def put(self, key: str, value: V) -> None:
        self[key] = value
        self.move_to_end(key)
        while len(self) > self.size:
            self.popitem(last=False)
