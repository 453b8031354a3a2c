"""Bot accounts (identities) and bindings on the dashboard. Connecting one: its platform's credential fields,
typed once, checked with the platform by the CLI's `verify`, then sealed and stored; they are never shown again
(only masked), nor put in a URL, the audit log or a page. Each identity shows whether it runs. A binding sends an
identity's messages to an agent, narrowed to a chat, thread, user or kind of chat; the most specific one wins."""

from __future__ import annotations

from typing import Any

from aiohttp import web
from pydantic import ValidationError

from bot.adapter import find_spec, installed_platforms
from bot.fleet.catalog import FleetError
from bot.fleet.model import Binding, Identity
from bot.fleet.secrets import SecretKeyError, masked
from bot.ops.redact import redact
from bot.web.agents import console, problem, say
from bot.web.dashboard import DEPS, render_page, url
from bot.web.roles import actor


def platforms() -> dict[str, tuple[tuple[str, ...], tuple[str, ...]]]:
    """Platforms an identity can be made for: name → (required credentials, optional ones)."""
    out = {}
    for name in installed_platforms():
        spec = find_spec(name)
        if spec is not None and spec.account:
            out[name] = (spec.required_env, tuple(v for v in spec.account if v not in spec.required_env))
    return out


def precedence(binding: Binding) -> int:
    """Its row in README's "Agents and bots" table: 1 a thread, 2 a chat, 3 a user, 4 a kind, 5 the identity."""
    for rank, narrowed in enumerate((binding.thread_id, binding.chat_id, binding.user_id, binding.kind), 1):
        if narrowed is not None:
            return rank
    return 5


async def identities_page(request: web.Request, error: str = "", status: int = 200,
                          form: dict[str, str] | None = None) -> web.Response:
    fleet = console(request)
    catalog = await fleet.catalog()
    choices = platforms()
    platform = (form or {}).get("platform") or request.query.get("platform", "")
    rows = [{"identity": i, "state": (state := fleet.state(i)), "state_key": f"id_state_{state.state}",
             "default": not i.tag,
             "credentials": {k: masked(v) for k, v in i.credentials.items()}} for i in catalog.identities.values()]
    bindings = sorted(catalog.bindings, key=lambda b: (b.identity, precedence(b)))
    context: dict[str, Any] = {
        "identities": rows, "platforms": choices, "platform": platform if platform in choices else "",
        "bindings": [(b, precedence(b)) for b in bindings], "agents": list(catalog.agents),
        "error": error, "notice": request.query.get("notice", ""), "form": form or {},
        "key_set": fleet.fleet.sealer is not None}
    response = render_page("identities.html", request, context, status)
    response.headers["Cache-Control"] = "no-store"
    return response


async def connect(request: web.Request) -> web.StreamResponse:
    """A new identity, or new credentials for one: checked with the platform before anything is stored."""
    fleet = console(request)
    form = await request.post()
    name, platform = str(form.get("name") or "").strip(), str(form.get("platform") or "")
    kept = {"name": name, "platform": platform}  # what a refused form shows again: never a credential
    needed, optional = platforms().get(platform, ((), ()))
    credentials = {var: value for var in (*needed, *optional)
                   if (value := str(form.get(f"cred_{var}") or "").strip())}
    if not needed or any(var not in credentials for var in needed):
        return await identities_page(request, say(request, "id_needs", fields=", ".join(needed) or "?"), 400, kept)
    try:
        identity = Identity(name=name, platform=platform, credentials=credentials)
        line = await fleet.verify(identity)
    except ValidationError as e:
        return await identities_page(request, problem(e), 400, kept)
    except Exception as e:  # the platform's refusal, worded by its doctor
        return await identities_page(request, say(request, "id_refused", name=name,
                                                         error=redact(str(e), credentials.values())), 400, kept)
    try:
        await fleet.fleet.put_identity(identity, actor(request))
    except (FleetError, SecretKeyError) as e:
        return await identities_page(request, str(e), 400, kept)
    await request.app[DEPS].store.dashboard.add_audit(actor(request), "identity-connect", name, platform)
    fleet.changed()
    raise web.HTTPSeeOther(url("/identities", notice=say(request, "id_connected", name=name, line=line)))


async def switch(request: web.Request) -> web.StreamResponse:
    """Turn a stored identity on or off (its adapter starts or stops; the others keep running)."""
    fleet = console(request)
    form = await request.post()
    name, on = str(form.get("name") or ""), form.get("enabled") == "on"
    identity = (await fleet.catalog()).identities.get(name)
    if identity is None or not identity.tag:
        raise web.HTTPBadRequest(text="name a stored identity")
    try:
        await fleet.fleet.put_identity(identity.model_copy(update={"enabled": on, "credentials": {}}), actor(request))
    except FleetError as e:
        return await identities_page(request, str(e), 400)
    await request.app[DEPS].store.dashboard.add_audit(actor(request), "identity-on" if on else "identity-off", name)
    fleet.changed()
    raise web.HTTPSeeOther(url("/identities", notice=say(request, "id_on" if on else "id_off", name=name)))


async def bind(request: web.Request) -> web.StreamResponse:
    fleet = console(request)
    form = await request.post()
    fields = {key: value for key in ("identity", "agent", "chat_id", "thread_id", "user_id", "kind")
              if (value := str(form.get(key) or "").strip())}
    try:
        binding = Binding.model_validate(fields)
        await fleet.fleet.put_binding(binding, actor(request))
    except (ValidationError, FleetError) as e:
        return await identities_page(request, problem(e), 400)
    await request.app[DEPS].store.dashboard.add_audit(actor(request), "bind", binding.key, binding.agent)
    fleet.changed()
    notice = say(request, "bd_saved", binding=binding.key, agent=binding.agent)
    raise web.HTTPSeeOther(url("/identities", notice=notice))


async def unbind(request: web.Request) -> web.StreamResponse:
    fleet = console(request)
    key = str((await request.post()).get("key") or "")
    if not await fleet.fleet.remove("binding", key, actor(request)):
        raise web.HTTPSeeOther(url("/identities", notice=say(request, "bd_none", binding=key)))
    await request.app[DEPS].store.dashboard.add_audit(actor(request), "unbind", key)
    fleet.changed()
    raise web.HTTPSeeOther(url("/identities", notice=say(request, "bd_removed", binding=key)))


def add_routes(app: web.Application) -> None:
    app.router.add_get("/identities", identities_page)
    app.router.add_post("/identities/connect", connect)
    app.router.add_post("/identities/switch", switch)
    app.router.add_post("/bindings", bind)
    app.router.add_post("/bindings/remove", unbind)
