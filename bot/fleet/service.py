"""Changes to agents, identities and bindings, the one way the CLI, `bothub apply` and the dashboard make them:
checked against the rest of the fleet first, credentials sealed before they reach the store, every change
recorded with who made it."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence

from bot.fleet.catalog import Catalog, FleetError, build, dump
from bot.fleet.model import DEFAULT_AGENT, Agent, Binding, Identity
from bot.fleet.secrets import Sealer, SecretKeyError
from bot.store.fleet import FleetChange, FleetRow, FleetStore, Kind

Defaults = Callable[[], tuple[Sequence[Agent], Sequence[Identity]]]


class Fleet:
    def __init__(self, store: FleetStore, env: Mapping[str, str], defaults: Defaults) -> None:
        self.store = store
        self._env = env
        self._defaults = defaults
        self._sealer: Sealer | None = None

    @property
    def sealer(self) -> Sealer | None:
        """The key's sealer, once the key is set (credentials can neither be stored nor read without it)."""
        if self._sealer is None and self._env.get("BOTHUB_SECRET_KEY"):
            self._sealer = Sealer.from_env(self._env)
        return self._sealer

    async def load(self) -> Catalog:
        version = await self.store.version()  # first: a change after it is seen by the next load
        agents, identities = self._defaults()
        return build(agents, identities, await self.store.rows(), self.sealer, version)

    async def put_agent(self, agent: Agent, actor: str) -> bool:
        if agent.name == DEFAULT_AGENT and not agent.enabled:
            raise FleetError("the default agent cannot be disabled: it answers wherever no binding does")
        await self._check(agents={agent.name: agent})
        return await self.store.put(FleetRow("agent", agent.name, dump(agent)), actor)

    async def put_identity(self, identity: Identity, actor: str) -> bool:
        """Store an identity; its credentials, when given, replace the stored ones (sealed first)."""
        if not identity.tag:
            raise FleetError(f"{identity.name} is the platform's default identity: its credentials come from the "
                             "environment and its settings from the config file; give this one another name")
        await self._check(identities={identity.name: identity})
        sealed = None
        if identity.credentials:
            if self.sealer is None:
                raise SecretKeyError("BOTHUB_SECRET_KEY is not set: credentials are only stored encrypted "
                                     "(`bothub secrets new-key` prints a fresh key)")
            sealed = self.sealer.seal(identity.credentials, identity.name)
        return await self.store.put(FleetRow("identity", identity.name, dump(identity), sealed), actor)

    async def put_binding(self, binding: Binding, actor: str) -> bool:
        await self._check(bindings=[binding])
        return await self.store.put(FleetRow("binding", binding.key, dump(binding)), actor)

    async def remove(self, kind: Kind, name: str, actor: str) -> bool:
        """Remove a stored object; an agent or identity that bindings still name stays (remove those first)."""
        if kind != "binding":
            catalog = await self.load()
            users = [b.key for b in catalog.bindings if name in ((b.agent,) if kind == "agent" else (b.identity,))]
            if users:
                raise FleetError(f"{kind} {name} is still bound ({', '.join(users)}): unbind it first")
            if kind == "agent" and name == DEFAULT_AGENT:
                raise FleetError("the default agent cannot be removed (its stored changes can: edit it back)")
        return await self.store.remove(kind, name, actor)

    async def changes(self, limit: int = 100, kind: Kind | None = None) -> list[FleetChange]:
        return await self.store.changes(limit, kind)

    async def _check(self, agents: Mapping[str, Agent] | None = None,
                     identities: Mapping[str, Identity] | None = None, bindings: Sequence[Binding] = ()) -> None:
        current = await self.load()
        merged = Catalog({**current.agents, **(agents or {})}, {**current.identities, **(identities or {})},
                         (*[b for b in current.bindings if b.key not in {n.key for n in bindings}], *bindings))
        if problems := merged.problems():
            raise FleetError("; ".join(problems))


async def rotate_key(store: FleetStore, old: Sealer, new: Sealer) -> int:
    """Re-seal every stored credential under a new key, in one transaction (a wrong old key changes nothing)."""
    return await store.reseal(lambda sealed, owner: new.seal(old.open(sealed, owner), owner))
