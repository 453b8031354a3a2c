"""`bothub agents`, `bothub identities`, `bothub bind`, `bothub apply` and `bothub secrets`: the fleet changed
from the command line, through the store, so every running hub follows within `fleet.poll` seconds. A new
identity's credentials are checked with the platform (its spec's doctor) before they are stored."""

from __future__ import annotations

import argparse
import asyncio
import getpass
import json
import sys
from collections.abc import Callable, Mapping
from typing import Any

from bot.config import Config, ConfigError
from bot.fleet import apply as applying
from bot.fleet.catalog import Catalog, FleetError
from bot.fleet.defaults import default_agent, default_identities
from bot.fleet.model import Agent, Binding, Identity, ToolPolicy
from bot.fleet.secrets import NEW_KEY_ENV, Sealer, SecretKeyError, masked, new_key
from bot.fleet.service import Fleet, rotate_key
from bot.i18n import t
from bot.live.bots import made_for, verify
from bot.store.backends import store_for_url
from bot.store.fleet import FleetStore

ACTOR = "cli"


async def run(cfg: Config, command: str, args: argparse.Namespace, env: Mapping[str, str]) -> int:
    lang = cfg.language
    if command == "secrets" and args.action == "new-key":
        print(new_key())
        return 0
    store = store_for_url(cfg.database_url, cfg.database.pool_size)
    await store.open()
    try:
        fleet = _fleet(cfg, store.fleet, env)
        handler = {"agents": _agents, "identities": _identities, "bind": _bind, "apply": _apply,
                   "secrets": _rotate}[command]
        return await handler(cfg, fleet, args, env)
    except (FleetError, SecretKeyError, ConfigError, ValueError) as e:
        print(t(lang, "fleet_error", error=e), file=sys.stderr)
        return 1
    finally:
        await store.close()


def _fleet(cfg: Config, store: FleetStore, env: Mapping[str, str]) -> Fleet:
    return Fleet(store, env, lambda: ([default_agent(cfg)], default_identities(cfg, env, cfg.enabled_platforms)))


async def account_of(cfg: Config, platform: str, name: str, env: dict[str, str]) -> tuple[Any, dict[str, str]]:
    """A platform command run `--identity NAME`: the stored identity's config section and environment (its
    credentials in place of the default account's), as its running adapter has them."""
    store = store_for_url(cfg.database_url, cfg.database.pool_size)
    await store.open()
    try:
        identity = (await _fleet(cfg, store.fleet, env).load()).identities.get(name)
    finally:
        await store.close()
    if identity is None or identity.platform != platform:
        raise FleetError(f"no {platform} identity named {name!r} (`bothub identities` lists them)")
    _, section, own = made_for(cfg, env, identity)
    return section, own


def _say(cfg: Config, key: str, *, aside: bool = False, **values: object) -> None:
    """`aside`: to stderr, so that stdout stays one JSON document (--json)."""
    print(t(cfg.language, key, **values), file=sys.stderr if aside else sys.stdout)


def _saved(cfg: Config, changed: bool, kind: str, name: str) -> int:
    _say(cfg, "fleet_saved" if changed else "fleet_unchanged", kind=kind, name=name)
    return 0


def _csv(text: str | None) -> tuple[str, ...]:
    return tuple(part.strip() for part in (text or "").split(",") if part.strip())


async def _agents(cfg: Config, fleet: Fleet, args: argparse.Namespace, env: Mapping[str, str]) -> int:
    if args.action == "history":
        changes = await fleet.changes(50)
        rows = [{"id": c.id, "at": c.at.isoformat(), "actor": c.actor, "kind": c.kind, "name": c.name,
                 "action": c.action, "credentials": c.credentials} for c in changes]
        return _show(args, rows, lambda r: f"{r['at']}  {r['actor']:<12} {r['action']:<6} {r['kind']} {r['name']}"
                     + ("  (credentials)" if r["credentials"] else ""))
    catalog = await fleet.load()
    if args.action == "list":
        rows = [a.model_dump(mode="json") for a in catalog.agents.values()]
        return _show(args, rows, lambda r: f"{r['name']:<16} model={r['model'] or cfg.llm.chat_model}  "
                     f"workspace={r['workspace'] or cfg.workspace_dir}")
    if not args.name:
        raise FleetError("name the agent")
    if args.action == "remove":
        return _removed(cfg, await fleet.remove("agent", args.name, ACTOR), "agent", args.name)
    old = catalog.agents.get(args.name) or Agent(name=args.name)
    tools = old.tools.model_copy(update={k: v for k, v in {
        "allow": _csv(args.allow_tools) if args.allow_tools is not None else None,
        "deny": _csv(args.deny_tools) if args.deny_tools is not None else None,
        "mcp": _csv(args.mcp) if args.mcp is not None else None,
        "shell": False if args.no_shell else None}.items() if v is not None})
    fields: dict[str, Any] = {"tools": ToolPolicy.model_validate(tools.model_dump())}
    for field, value in (("workspace", args.workspace), ("model", args.model), ("language", args.language),
                         ("admins", _csv(args.admins) if args.admins is not None else None)):
        if value is not None:
            fields[field] = value
    agent = Agent.model_validate({**old.model_dump(), **fields})
    return _saved(cfg, await fleet.put_agent(agent, ACTOR), "agent", agent.name)


async def _identities(cfg: Config, fleet: Fleet, args: argparse.Namespace, env: Mapping[str, str]) -> int:
    catalog = await fleet.load()
    if args.action == "list":
        rows = [{"name": i.name, "platform": i.platform, "enabled": i.enabled, "default": not i.tag,
                 "settings": i.settings, "credentials": {k: masked(v) for k, v in i.credentials.items()}}
                for i in catalog.identities.values()]
        return _show(args, rows, lambda r: f"{r['name']:<16} {r['platform']:<10} "
                     f"{'on ' if r['enabled'] else 'off'} " + " ".join(f"{k}={v}" for k, v in r["credentials"].items()))
    if not args.name:
        raise FleetError("name the identity")
    if args.action == "remove":
        return _removed(cfg, await fleet.remove("identity", args.name, ACTOR), "identity", args.name)
    if args.action in ("enable", "disable"):
        old = _stored(catalog, args.name)
        identity = old.model_copy(update={"enabled": args.action == "enable", "credentials": {}})
        return _saved(cfg, await fleet.put_identity(identity, ACTOR), "identity", args.name)
    if not args.platform:
        raise FleetError("--platform names the identity's platform")
    settings = dict(item.split("=", 1) for item in args.set if "=" in item)
    identity = Identity(name=args.name, platform=args.platform, settings=settings,
                        credentials=dict(_credential(cfg, item, env) for item in args.credential))
    if not args.no_check:  # the platform says whether the credentials work before they are stored
        try:
            _say(cfg, "fleet_checked", name=identity.name, line=await verify(cfg, env, identity))
        except Exception as e:
            _say(cfg, "fleet_check_failed", name=identity.name, error=e)
            return 1
    return _saved(cfg, await fleet.put_identity(identity, ACTOR), "identity", identity.name)


def _stored(catalog: Catalog, name: str) -> Identity:
    if name not in catalog.identities:
        raise FleetError(f"no identity named {name!r}")
    return catalog.identities[name]


def _credential(cfg: Config, item: str, env: Mapping[str, str]) -> tuple[str, str]:
    """`VAR=ENV` reads the environment variable ENV; `VAR` asks for the value without echoing it."""
    var, sep, source = item.partition("=")
    if sep:
        if not env.get(source):
            raise FleetError(f"--credential {item}: {source} is not set")
        return var, env[source]
    return var, getpass.getpass(t(cfg.language, "fleet_credential_prompt", name=var))


async def _bind(cfg: Config, fleet: Fleet, args: argparse.Namespace, env: Mapping[str, str]) -> int:
    if args.list or not args.identity:
        rows = [b.model_dump(mode="json") | {"place": b.key} for b in (await fleet.load()).bindings]
        return _show(args, rows, lambda r: f"{r['place']:<40} → {r['agent']}")
    binding = Binding(identity=args.identity, agent=args.agent or "default", chat_id=args.chat,
                      thread_id=args.thread, user_id=args.user, kind=args.kind)
    if args.remove:
        return _removed(cfg, await fleet.remove("binding", binding.key, ACTOR), "binding", binding.key)
    if not args.agent:
        raise FleetError("name the agent: bothub bind IDENTITY AGENT")
    return _saved(cfg, await fleet.put_binding(binding, ACTOR), "binding", binding.key)


async def _apply(cfg: Config, fleet: Fleet, args: argparse.Namespace, env: Mapping[str, str]) -> int:
    desired = applying.read(args.file.read_text(encoding="utf-8"), env)
    stored = {(row.kind, row.name) for row in await fleet.store.rows()}
    steps = applying.plan(await fleet.load(), stored, desired, prune=args.prune)
    if args.json:
        print(json.dumps([{"sign": s.sign, "kind": s.kind, "name": s.name, "detail": s.detail} for s in steps],
                         ensure_ascii=False))
    else:
        for step in steps:
            print(step.line)
    if not steps:
        _say(cfg, "fleet_no_changes", aside=args.json)
        return 0
    asked = sys.stdin.isatty() and not args.yes
    answer = await asyncio.to_thread(input, t(cfg.language, "fleet_confirm")) if asked else ""
    confirmed = args.yes or answer.strip().lower() in ("y", "yes", "是")
    if not confirmed:
        _say(cfg, "fleet_not_applied", aside=args.json)
        return 1
    _say(cfg, "fleet_applied", aside=args.json, count=await applying.apply(fleet, steps))
    return 0


async def _rotate(cfg: Config, fleet: Fleet, args: argparse.Namespace, env: Mapping[str, str]) -> int:
    count = await rotate_key(fleet.store, Sealer.from_env(env), Sealer.from_env(env, NEW_KEY_ENV))
    _say(cfg, "fleet_rotated", count=count)
    return 0


def _removed(cfg: Config, gone: bool, kind: str, name: str) -> int:
    _say(cfg, "fleet_removed" if gone else "fleet_not_found", kind=kind, name=name)
    return 0 if gone else 1


def _show(args: argparse.Namespace, rows: list[dict[str, Any]], line: Callable[[dict[str, Any]], str]) -> int:
    if getattr(args, "json", False):
        print(json.dumps(rows, ensure_ascii=False, default=str))
    else:
        for row in rows:
            print(line(row))
    return 0
