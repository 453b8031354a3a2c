"""Agents on the dashboard: the list, a new one, its settings (model, language, tools, admins, on or off), its
workspace files edited in place, and the system prompt those files assemble into with its P0/P1/P2 budget.
Changes go through the fleet model the CLI uses (checked, recorded with the actor "dashboard") and are in force at
once; a workspace file saved here is read again by the agent's running prompt."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from aiohttp import web
from pydantic import ValidationError

from bot.agent.prompt import TRIM_MARKER, join_sections, priority
from bot.agent.tokens import estimate_tokens
from bot.fleet.catalog import FleetError
from bot.fleet.model import Agent, ToolPolicy
from bot.httpkit import lang
from bot.i18n import t
from bot.live.console import FleetConsole, editable
from bot.web import roles
from bot.web.dashboard import DEPS, render_page, url


def console(request: web.Request) -> FleetConsole:
    return request.app[DEPS].fleet


def say(request: web.Request, key: str, **values: object) -> str:
    return t(lang.pick(request), key, **values)


def csv(text: object) -> tuple[str, ...]:
    return tuple(part.strip() for part in str(text or "").split(",") if part.strip())


def problem(error: Exception) -> str:
    """A refused change in one line: pydantic's errors without their URLs, the fleet's as they are."""
    if isinstance(error, ValidationError):
        return "; ".join(f"{'.'.join(map(str, e['loc'])) or 'value'}: {e['msg']}" for e in error.errors())
    return str(error)


async def agents_page(request: web.Request, error: str = "", status: int = 200) -> web.Response:
    fleet = console(request)
    catalog = await fleet.catalog()
    bound = {name: sum(b.agent == name for b in catalog.bindings) for name in catalog.agents}
    account = roles.who(request)
    shown = [a for a in catalog.agents.values() if not account.scoped or a.name in account.agents]
    context = {"agents": shown, "bound": bound, "error": error,
               "chat_model": fleet.cfg.llm.chat_model, "notice": request.query.get("notice", ""),
               "models": models(fleet)}
    return render_page("agents.html", request, context, status)


def models(fleet: FleetConsole) -> list[str]:
    """What an agent's model may name: the chains and the allowed models (a free-typed model works too)."""
    llm = fleet.cfg.llm
    return list(dict.fromkeys([llm.chat_model, *llm.chains, *llm.allowed_models]))


async def agent_page(request: web.Request, error: str = "", status: int = 200, name: str = "") -> web.Response:
    fleet = console(request)
    agent = (await fleet.catalog()).agents.get(name or request.query.get("name", ""))
    if agent is None:
        raise web.HTTPNotFound(text="no such agent")
    files = await fleet.files(agent)
    chosen = request.query.get("file", "SOUL.md")
    if chosen not in files:
        chosen = "SOUL.md"
    context = {"agent": agent, "files": files, "file": chosen, "text": files[chosen], "error": error,
               "notice": request.query.get("notice", ""), "workspace": str(fleet.workspace(agent)),
               "models": models(fleet), "chat_model": fleet.cfg.llm.chat_model, **await preview(fleet, agent)}
    return render_page("agent.html", request, context, status)


async def preview(fleet: FleetConsole, agent: Agent) -> dict[str, Any]:
    """The system prompt a chat with no memories gets from this agent now, section by section with its priority
    and size, and how much of the P1 and P2 budgets it uses."""
    builder, tools = await fleet.prompt(agent)
    sections = builder.sections("default", tools)
    rows = [Section(title, priority(title), estimate_tokens(text), TRIM_MARKER in text) for title, text in sections]
    used = {level: sum(r.tokens for r in rows if r.priority == level) for level in ("P0", "P1", "P2")}
    return {"sections": rows, "prompt_text": join_sections(sections), "used": used,
            "p1_budget": builder.p1_budget_tokens, "p2_budget": builder.memory_budget_tokens,
            "total_tokens": sum(r.tokens for r in rows), "context_tokens": fleet.cfg.llm.context_tokens}


@dataclass(frozen=True, slots=True)
class Section:
    title: str
    priority: str  # P0, P1, P2 or "" (fixed)
    tokens: int
    trimmed: bool


async def agent_save(request: web.Request) -> web.StreamResponse:
    """Create an agent (its own workspace `ws/<name>`, seeded from the bundled files) or change one."""
    fleet = console(request)
    form = await request.post()
    name = str(form.get("name") or "").strip()
    catalog = await fleet.catalog()
    old = catalog.agents.get(name)
    creating = form.get("new") == "1"
    if creating and old is not None:
        return await agents_page(request, say(request, "ag_exists", name=name), 400)
    base = old or Agent.model_construct(name=name, workspace=f"ws/{name}")
    fields: dict[str, Any] = {**base.model_dump(), "name": name,
                              "model": str(form.get("model") or "").strip() or None,
                              "language": str(form.get("language") or "") or None}
    if not creating:
        fields |= {"admins": csv(form.get("admins")), "enabled": form.get("enabled") == "on",
                   "tools": ToolPolicy(allow=csv(form.get("allow")), deny=csv(form.get("deny")),
                                       shell=form.get("shell") == "on", mcp=base.tools.mcp)}
    try:
        agent = Agent.model_validate(fields)
        changed = await fleet.fleet.put_agent(agent, roles.actor(request))
    except (ValidationError, FleetError) as e:
        if creating:
            return await agents_page(request, problem(e), 400)
        return await agent_page(request, problem(e), 400, name)
    if changed:
        action = "agent-new" if creating else "agent-set"
        await request.app[DEPS].store.dashboard.add_audit(roles.actor(request), action, name)
        fleet.changed()
    raise web.HTTPSeeOther(url("/agents/edit", name=name,
                               notice=say(request, "ag_saved" if changed else "ag_unchanged", name=name)))


async def file_save(request: web.Request) -> web.StreamResponse:
    """One workspace file replaced; the agent's next answer reads it."""
    fleet = console(request)
    form = await request.post()
    name, file = str(form.get("name") or ""), str(form.get("file") or "")
    agent = (await fleet.catalog()).agents.get(name)
    if agent is None or not editable(file):
        raise web.HTTPBadRequest(text="name an agent and one of its workspace files")
    try:
        await fleet.write(agent, file, str(form.get("text") or "").replace("\r\n", "\n"))
    except ValueError as e:
        return await agent_page(request, str(e), 400, name)
    await request.app[DEPS].store.dashboard.add_audit(roles.actor(request), "workspace-file", name, file)
    raise web.HTTPSeeOther(url("/agents/edit", name=name, file=file,
                               notice=say(request, "ag_file_saved", file=file, name=name)))


def add_routes(app: web.Application) -> None:
    app.router.add_get("/agents", agents_page)
    app.router.add_get("/agents/edit", agent_page)
    app.router.add_post("/agents/save", agent_save)
    app.router.add_post("/agents/file", file_save)

