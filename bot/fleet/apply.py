"""`bothub apply agents.yaml`: the fleet as a file kept in git. `${NAME}` in credential values is read from the
environment, so tokens stay out of the file. `plan` compares the file with the store and says what would change
(credentials only as "replaced", never their values); applying the same file again changes nothing."""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import yaml
from pydantic import ValidationError

from bot.fleet.catalog import Catalog, FleetError, dump
from bot.fleet.model import Agent, Binding, Identity
from bot.fleet.service import Fleet
from bot.store.fleet import Kind

_VAR = re.compile(r"\$\{([A-Za-z_][A-Za-z0-9_]*)\}")
Obj = Agent | Identity | Binding


@dataclass(frozen=True, slots=True)
class Step:
    sign: str  # "+" new, "~" changed, "-" removed
    kind: Kind
    name: str
    detail: str = ""
    obj: Obj | None = None  # what to store (None for a removal)

    @property
    def line(self) -> str:
        return f"{self.sign} {self.kind} {self.name}" + (f": {self.detail}" if self.detail else "")


@dataclass(frozen=True, slots=True)
class Desired:
    agents: tuple[Agent, ...]
    identities: tuple[Identity, ...]
    bindings: tuple[Binding, ...]


def read(text: str, env: Mapping[str, str]) -> Desired:
    """The file's agents, identities and bindings, checked; raises FleetError saying what is wrong and where."""
    try:
        raw = yaml.safe_load(text) or {}
    except yaml.YAMLError as e:
        raise FleetError(f"not valid YAML: {e}") from e
    if not isinstance(raw, dict) or set(raw) - {"agents", "identities", "bindings"}:
        raise FleetError("the file holds a mapping with agents:, identities: and bindings: lists")

    def each(key: str, model: type[Obj]) -> list[Any]:
        items = raw.get(key) or []
        if not isinstance(items, list):
            raise FleetError(f"{key}: a list")
        out: list[Any] = []
        for n, item in enumerate(items, 1):
            try:
                if model is Identity and isinstance(item, dict):
                    creds = {k: _expand(str(v), env, f"{key}[{n}].credentials.{k}")
                             for k, v in (item.get("credentials") or {}).items()}
                    item = {k: v for k, v in item.items() if k != "credentials"}
                    out.append(Identity.model_validate(item).model_copy(update={"credentials": creds}))
                else:
                    out.append(model.model_validate(item))
            except ValidationError as e:
                problems = "; ".join(f"{'.'.join(map(str, err['loc']))}: {err['msg']}" for err in e.errors())
                raise FleetError(f"{key}[{n}]: {problems}") from None
        return out

    return Desired(tuple(each("agents", Agent)), tuple(each("identities", Identity)),
                   tuple(each("bindings", Binding)))


def _expand(value: str, env: Mapping[str, str], where: str) -> str:
    def var(match: re.Match[str]) -> str:
        if match.group(1) not in env:
            raise FleetError(f"{where}: ${{{match.group(1)}}} is not set")
        return env[match.group(1)]

    return _VAR.sub(var, value)


def plan(current: Catalog, stored: set[tuple[Kind, str]], desired: Desired, prune: bool = False) -> list[Step]:
    """What applying `desired` would do. `stored`: the (kind, name) pairs the store holds (defaults are not
    pruned); `prune` removes stored objects the file leaves out."""
    steps: list[Step] = []
    olds: dict[str, Mapping[str, Obj]] = {"agent": current.agents, "identity": current.identities,
                                          "binding": {b.key: b for b in current.bindings}}
    wanted: set[tuple[Kind, str]] = set()
    lists: tuple[tuple[Kind, tuple[Obj, ...]], ...] = (
        ("agent", desired.agents), ("identity", desired.identities), ("binding", desired.bindings))
    for kind, objs in lists:
        for obj in objs:
            name = obj.key if isinstance(obj, Binding) else obj.name
            wanted.add((kind, name))
            old = olds[kind].get(name) if (kind, name) in stored else None
            if old is None:
                steps.append(Step("+", kind, name, obj=obj))
            elif (detail := _differences(old, obj)):
                if isinstance(obj, Identity) and isinstance(old, Identity) and obj.credentials == old.credentials:
                    obj = obj.model_copy(update={"credentials": {}})  # kept as stored, not sealed again
                steps.append(Step("~", kind, name, detail, obj))
    if prune:
        steps += [Step("-", kind, name) for kind, name in sorted(stored - wanted)]
    return steps


def _differences(old: Obj, new: Obj) -> str:
    before, after = json.loads(dump(old)), json.loads(dump(new))
    changed = [f"{key} {json.dumps(before.get(key))} → {json.dumps(after.get(key))}"
               for key in sorted(set(before) | set(after)) if before.get(key) != after.get(key)]
    if isinstance(old, Identity) and isinstance(new, Identity) and new.credentials \
            and new.credentials != old.credentials:
        changed.append("credentials replaced")
    return ", ".join(changed)


async def apply(fleet: Fleet, steps: list[Step], actor: str = "apply") -> int:
    """Agents first, then identities, then bindings (each may name the ones before); removals last, bindings first."""
    order = {"agent": 0, "identity": 1, "binding": 2}
    done = 0
    for step in sorted((s for s in steps if s.obj is not None), key=lambda s: order[s.kind]):
        if isinstance(step.obj, Agent):
            done += await fleet.put_agent(step.obj, actor)
        elif isinstance(step.obj, Identity):
            done += await fleet.put_identity(step.obj, actor)
        elif isinstance(step.obj, Binding):
            done += await fleet.put_binding(step.obj, actor)
    for step in sorted((s for s in steps if s.obj is None), key=lambda s: -order[s.kind]):
        done += await fleet.remove(step.kind, step.name, actor)
    return done
