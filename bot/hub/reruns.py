"""The runs a command may start in its own chat (bot/commands/services.py `Rerun`): /retry's answer again, a
duel's answers, a replay. They run in the lane the command already holds, so nothing else in the chat interleaves."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable

from bot.chats.sessions import Session
from bot.delivery import Delivery
from bot.run.duel import Duels
from bot.run.replay import Recorded, Replayed, Replays
from bot.run.runner import AgentRunner
from bot.run.turn import TurnContext
from bot.tree.model import Message


class Reruns:
    def __init__(self, runner: AgentRunner, duels: Duels, replays: Replays, session: Session,
                 turn: Callable[[str], TurnContext], delivery: Delivery) -> None:
        self._runner, self._duels, self._replays = runner, duels, replays
        self._session, self._turn, self._delivery = session, turn, delivery

    @property
    def agents(self) -> list[str]:
        return self._duels.roster.agents if self._duels.roster is not None else []

    async def again(self, text: str, model: str | None = None) -> None:
        await self._runner.run(self._session, dataclasses.replace(self._turn(text), model=model), self._delivery)

    async def duel(self, path: list[Message], names: list[str]) -> None:
        await self._runner.load(self._session)
        await self._duels.run(self._session, self._turn(path[-1].content), self._delivery, path, names)

    async def replay(self, path: list[Message], recorded: list[Recorded] | None, model: str, head: str) -> Replayed:
        await self._runner.load(self._session)
        return await self._replays.run(self._session, self._turn(path[-1].content), self._delivery, path, recorded,
                                       model, head)
