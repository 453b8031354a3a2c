"""One consistent snapshot of agents, identities and bindings: what routing reads on every message (a dict
lookup and a scan of one identity's few bindings), replaced whole when something changes."""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field

from bot.adapter import find_spec
from bot.config import ConfigError
from bot.fleet.model import DEFAULT_AGENT, Agent, Binding, Identity, choose
from bot.fleet.secrets import Sealer
from bot.store.fleet import FleetRow


class FleetError(ConfigError):
    """A change that would leave the fleet inconsistent, worded for whoever made it (`bothub run` prints it as a
    configuration problem)."""


@dataclass(frozen=True)
class Catalog:
    agents: Mapping[str, Agent]
    identities: Mapping[str, Identity]
    bindings: tuple[Binding, ...] = ()
    version: int = 0  # the store's change id this snapshot reflects
    _by_identity: dict[str, list[Binding]] = field(default_factory=dict, init=False, compare=False, repr=False)

    def __post_init__(self) -> None:
        for binding in self.bindings:
            self._by_identity.setdefault(binding.identity, []).append(binding)

    def agent_for(self, identity: str, chat_id: str, thread_id: str | None, user_id: str, is_group: bool) -> Agent:
        """The agent that answers this message; a binding to an agent that is gone or disabled falls back to the
        default."""
        agent = self.agents.get(self.bound_agent(identity, chat_id, thread_id, user_id, is_group))
        return agent if agent is not None and agent.enabled else self.agents[DEFAULT_AGENT]

    def bound_agent(self, identity: str, chat_id: str, thread_id: str | None, user_id: str, is_group: bool) -> str:
        """The agent the bindings name for this message, whether or not it is there and enabled."""
        return choose(self._by_identity.get(identity, []), chat_id, thread_id, user_id, is_group)

    def identity_named(self, platform: str, tag: str) -> Identity | None:
        return self.identities.get(tag or platform)

    def problems(self) -> list[str]:
        """What does not fit together: a binding to an unknown identity or agent, an unknown platform, credentials
        a platform does not read."""
        found = []
        for b in self.bindings:
            if b.identity not in self.identities:
                found.append(f"binding {b.key}: no identity named {b.identity!r}")
            if b.agent not in self.agents:
                found.append(f"binding {b.key}: no agent named {b.agent!r}")
        for identity in self.identities.values():
            spec = find_spec(identity.platform)
            if spec is None:
                found.append(f"identity {identity.name}: no platform named {identity.platform!r}")
                continue
            unknown = sorted(set(identity.credentials) - set(spec.account))
            if unknown:
                found.append(f"identity {identity.name}: {identity.platform} reads no credential named "
                             f"{', '.join(unknown)} (it reads {', '.join(spec.account)})")
            if identity.name != identity.platform and find_spec(identity.name) is not None:
                found.append(f"identity {identity.name}: that name is a platform's; choose another")
        return found


def dump(obj: Agent | Identity | Binding) -> str:
    """The stored JSON of an object: stable key order, so an unchanged object compares equal; no credentials."""
    return json.dumps(obj.model_dump(mode="json", exclude_defaults=True), sort_keys=True, ensure_ascii=False)


def build(defaults_agents: Iterable[Agent], default_identities: Iterable[Identity], rows: Iterable[FleetRow],
          sealer: Sealer | None, version: int = 0) -> Catalog:
    """The defaults, then what the store holds (a stored object of the same name replaces a default one)."""
    agents = {a.name: a for a in defaults_agents}
    identities = {i.name: i for i in default_identities}
    bindings: dict[str, Binding] = {}
    for row in rows:
        spec = json.loads(row.spec)
        if row.kind == "agent":
            agents[row.name] = Agent.model_validate(spec)
        elif row.kind == "identity":
            creds: dict[str, str] = {}
            if row.sealed is not None:
                if sealer is None:
                    raise FleetError(f"identity {row.name} has stored credentials: set BOTHUB_SECRET_KEY")
                creds = sealer.open(row.sealed, row.name)
            identities[row.name] = Identity.model_validate(spec).model_copy(update={"credentials": creds})
        else:
            bindings[row.name] = Binding.model_validate(spec)
    return Catalog(agents, identities, tuple(bindings.values()), version)
