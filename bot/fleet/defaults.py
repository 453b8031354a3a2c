"""The agent and identities an existing deployment already has, derived from its workspace, config and env, so
it runs unchanged: the `default` agent is today's workspace and model; each platform that runs has a default
identity named after it, holding the account its spec reads from the environment."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path

from bot.adapter import find_spec
from bot.config import Config
from bot.fleet.model import DEFAULT_AGENT, Agent, Identity, ToolPolicy


def default_agent(cfg: Config) -> Agent:
    return Agent(name=DEFAULT_AGENT, tools=ToolPolicy(shell=cfg.tools.shell_enabled))


def default_identities(cfg: Config, env: Mapping[str, str], platforms: Sequence[str]) -> list[Identity]:
    identities = []
    for platform in platforms:
        spec = find_spec(platform)
        account = spec.account if spec is not None else ()
        identities.append(Identity(name=platform, platform=platform,
                                   credentials={name: env[name] for name in account if env.get(name)}))
    return identities


def workspace_of(cfg: Config, agent: Agent) -> Path:
    """An agent's workspace folder: the configured one for the default agent, else its own (relative to data_dir)."""
    if agent.workspace is None:
        return cfg.workspace_dir
    return agent.workspace if agent.workspace.is_absolute() else cfg.data_dir / agent.workspace
