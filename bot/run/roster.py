"""Which agent answers a message, and that agent's runner: the bindings of the message's identity decide
(bot/fleet/model.py), the runner holds the agent's prompt builder (its workspace), model and tools."""

from __future__ import annotations

from collections.abc import Callable

from bot.fleet.catalog import Catalog
from bot.fleet.model import DEFAULT_AGENT, Agent
from bot.messages import ChatRef
from bot.run.runner import AgentRunner

Build = Callable[[Agent], AgentRunner]


class Roster:
    """Runners by agent, replaced whole when an agent changes (a run in progress keeps the runner it started
    with); routing is a dict lookup and a scan of one identity's bindings."""

    def __init__(self, catalog: Catalog, runners: dict[str, AgentRunner]) -> None:
        self.catalog = catalog
        self._runners = runners

    @property
    def default(self) -> AgentRunner:
        return self._runners[DEFAULT_AGENT]

    def for_chat(self, chat: ChatRef, user_id: str = "") -> AgentRunner:
        identity = chat.identity or chat.platform
        agent = self.catalog.agent_for(identity, chat.chat_id, chat.thread_id, user_id, chat.is_group)
        return self._runners.get(agent.name) or self.default

    def runner_of(self, agent: str) -> AgentRunner | None:
        return self._runners.get(agent)

    def changed_agents(self, catalog: Catalog) -> list[Agent]:
        """The agents of `catalog` whose runner must be (re)built: new, or changed."""
        return [agent for name, agent in catalog.agents.items()
                if name not in self._runners or self.catalog.agents.get(name) != agent]

    def update(self, catalog: Catalog, built: dict[str, AgentRunner]) -> None:
        """Switch to a new catalog with the runners `changed_agents` asked for; gone agents' runners go."""
        runners = {name: runner for name, runner in self._runners.items() if name in catalog.agents}
        self._runners = {**runners, **built}
        self.catalog = catalog

    @property
    def agents(self) -> list[str]:
        return list(self._runners)

    def runner(self, name: str) -> AgentRunner | None:
        """An agent's runner by its name (a duel's contender), None for no such agent."""
        return self._runners.get(name)
