"""What the dashboard needs of the running fleet, in one place: the same `Fleet` the CLI changes it through (so a
change is checked, sealed and recorded with its actor), this process's watch poked at once (the change is in force
here before the page reloads; other replicas follow by NOTIFY or `fleet.poll`), each identity's state, the
platform's `verify` before credentials are stored, and an agent's workspace and prompt for the preview."""

from __future__ import annotations

import asyncio
import os
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from bot.adapter import Adapter
from bot.agent.prompt import WORKSPACE_FILES, PromptBuilder
from bot.agent.workspace import ready_workspace
from bot.config import Config
from bot.fleet.catalog import Catalog
from bot.fleet.defaults import workspace_of
from bot.fleet.model import Agent, Identity
from bot.fleet.service import Fleet
from bot.live.bots import Bots, verify
from bot.live.watch import FleetWatch
from bot.messages import address
from bot.ops.redact import redact
from bot.run.roster import Roster

ROLE_FILE = re.compile(r"roles/[a-z0-9][a-z0-9_-]{0,31}\.md")
MAX_FILE_CHARS = 200_000  # a workspace file is instructions, not a data dump


@dataclass(frozen=True, slots=True)
class State:
    state: str  # running | stopped | error | connecting
    detail: str = ""


def editable(name: str) -> bool:
    """The workspace files the dashboard edits: the prompt's files and roles, nothing outside the folder."""
    return name in WORKSPACE_FILES or bool(ROLE_FILE.fullmatch(name))


class FleetConsole:
    def __init__(self, cfg: Config, env: Mapping[str, str], fleet: Fleet, watch: FleetWatch, bots: Bots,
                 roster: Roster, adapters: Sequence[Adapter]) -> None:
        self.cfg = cfg
        self.fleet = fleet
        self._env = env
        self._watch = watch
        self._bots = bots
        self._roster = roster
        self._adapters = adapters  # the hub's, as identities join and leave

    async def catalog(self) -> Catalog:
        return await self.fleet.load()

    def changed(self) -> None:
        """A change was stored: apply it in this process now, not at the next poll."""
        self._watch.poke()

    async def verify(self, identity: Identity) -> str:
        """The platform's answer to the identity's credentials (the CLI's check): a line, or it raises."""
        return await verify(self.cfg, self._env, identity)

    def state(self, identity: Identity) -> State:
        if not identity.enabled:
            return State("stopped")
        if error := self._bots.failed.get(identity.name):
            return State("error", redact(error, list(identity.credentials.values())))
        name = address(identity.platform, identity.tag)
        adapter = next((a for a in self._adapters if a.name == name), None)
        if adapter is None:
            return State("stopped")
        return State("running") if adapter.connected() else State("connecting")

    def workspace(self, agent: Agent) -> Path:
        return workspace_of(self.cfg, agent)

    async def files(self, agent: Agent) -> dict[str, str]:
        """The agent's workspace files by name (seeded from the bundled ones first, as its runner does)."""
        return await asyncio.to_thread(self._read_files, self.workspace(agent))

    @staticmethod
    def _read_files(folder: Path) -> dict[str, str]:
        ready_workspace(folder)
        names = [*WORKSPACE_FILES, *sorted(p.relative_to(folder).as_posix() for p in folder.glob("roles/*.md"))]
        return {name: (folder / name).read_text(encoding="utf-8") if (folder / name).is_file() else ""
                for name in names}

    async def write(self, agent: Agent, name: str, text: str) -> None:
        """Replace one workspace file (in one rename), then let the agent's running prompt read it again."""
        if not editable(name):
            raise ValueError(f"{name}: not a workspace file")
        if len(text) > MAX_FILE_CHARS:
            raise ValueError(f"{name}: longer than {MAX_FILE_CHARS} characters")
        await asyncio.to_thread(_replace, self.workspace(agent) / name, text)
        runner = self._roster.runner_of(agent.name)
        if runner is not None:
            await asyncio.to_thread(runner.assembly.prompts.reload)

    async def prompt(self, agent: Agent) -> tuple[PromptBuilder, list[str]]:
        """The agent's prompt as its runner would build it from the files now on disk, and its tools' names."""
        runner = self._roster.runner_of(agent.name)
        tools = list(runner.assembly.tools.names) if runner is not None else []
        folder = self.workspace(agent)

        def build() -> PromptBuilder:
            return PromptBuilder(folder, ready_workspace(folder), language=agent.language or self.cfg.language)

        return await asyncio.to_thread(build), tools


def _replace(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    scratch = path.with_name(f".{path.name}.new")
    scratch.write_text(text, encoding="utf-8")
    os.replace(scratch, path)
