"""Admin: pairing requests, access rules (read-only), skills, roles, pending shell approvals, HTTP API tokens,
the audit log, and per chat its model, language and memories. Every change goes through the service the matching chat
command uses and is written to the audit log."""

from __future__ import annotations

from typing import Any

from aiohttp import web

from bot.agent.approvals import BUTTON_LABELS, SCOPES
from bot.chats.api_tokens import ApiTokens
from bot.httpkit import lang
from bot.i18n import t
from bot.web.actions import change_settings
from bot.web.dashboard import DEPS, Deps, render_page, url

AUDIT_SHOWN = 50


async def admin_page(request: web.Request, **extra: Any) -> web.Response:
    deps = request.app[DEPS]
    access = {name: section.access for name, section in sorted(deps.cfg.sections.items())}
    context = {
        "pairings": await deps.services.pairing.pending(),
        "access": access,
        "skills": deps.services.prompts.skills.skills,
        "roles": deps.services.prompts.roles(),
        "approvals": deps.services.approvals.pending(),
        "approval_rules": await deps.services.approvals.rules(),
        "scope_labels": BUTTON_LABELS,
        "audit": await deps.store.dashboard.list_audit(AUDIT_SHOWN),
        "api_tokens": await _tokens(deps).list(),
        "created": None,
        "notice": request.query.get("notice", ""),
        **extra,
    }
    return render_page("admin.html", request, context)


async def _form(request: web.Request, *names: str) -> list[str]:
    form = await request.post()
    values = [form.get(name) for name in names]
    if not all(isinstance(v, str) and v.strip() for v in values):
        raise web.HTTPBadRequest(text=f"the form needs {', '.join(names)}")
    return [str(v).strip() for v in values]


def _say(request: web.Request, key: str, **values: object) -> str:
    """A notice in the signed-in browser's language."""
    return t(lang.pick(request), key, **values)


def _back(notice: str, path: str = "/admin", **params: str) -> web.HTTPSeeOther:
    return web.HTTPSeeOther(url(path, notice=notice, **params))


async def pairing(request: web.Request) -> web.StreamResponse:
    """Approve (as `/pair approve CODE`) or deny a pairing code."""
    deps = request.app[DEPS]
    platform, code, decision = await _form(request, "platform", "code", "decision")
    pairing = deps.services.pairing
    user = await (pairing.approve(platform, code) if decision == "approve" else pairing.deny(platform, code))
    if user is None:
        raise _back(_say(request, "notice_no_code", code=code, platform=platform))
    await deps.store.dashboard.add_audit("dashboard", f"pair-{decision}", platform, user)
    raise _back(_say(request, "notice_pair_approve" if decision == "approve" else "notice_pair_deny",
                             platform=platform, user=user))


async def approval(request: web.Request) -> web.StreamResponse:
    """Approve (once, for the conversation, always) or deny a pending request, as `/approve ID once|conv|always`
    or `/deny ID` in its chat."""
    deps = request.app[DEPS]
    chat, approval_id, decision = await _form(request, "chat", "id", "decision")
    if decision != "deny" and decision not in SCOPES:
        raise web.HTTPBadRequest(text="decision is once, conv, always or deny")
    answer = deps.services.approvals.decide(chat, approval_id, SCOPES.get(decision), True, "dashboard")
    await deps.store.dashboard.add_audit("dashboard", f"shell-{decision}", chat, approval_id)
    raise _back(answer)


async def approval_rule_revoke(request: web.Request) -> web.StreamResponse:
    """Delete a standing approval, as `/approvals revoke N` in its chat."""
    rule_id, = await _form(request, "id")
    gone = rule_id.isdecimal() and await request.app[DEPS].services.approvals.revoke(int(rule_id), None, "dashboard")
    raise _back(f"Revoked standing approval #{rule_id}." if gone else f"There is no standing approval #{rule_id}.")


async def chat_settings(request: web.Request) -> web.StreamResponse:
    """A chat's model and language, as `/model NAME` and `/lang en|zh` would set them."""
    deps = request.app[DEPS]
    chat, = await _form(request, "chat")
    form = await request.post()
    language, model = str(form.get("language") or ""), str(form.get("model") or "")
    if language not in ("en", "zh") or (model and model not in models(deps)):
        raise web.HTTPBadRequest(text="choose a language (en, zh) and one of the allowed models")
    saved = await change_settings(deps.services, chat, {"language": language, **({"model": model} if model else {})})
    await deps.store.dashboard.add_audit("dashboard", "chat-settings", chat, f"language={language} model={model}")
    raise _back(_say(request, "notice_saved" if saved else "notice_queued"), "/chats/view", chat=chat)


async def forget(request: web.Request) -> web.StreamResponse:
    """Forget a chat's memory number N, as `/forget N` in that chat."""
    deps = request.app[DEPS]
    chat, number = await _form(request, "chat", "number")
    if not number.isdecimal() or not await deps.services.memory.forget(chat, int(number)):
        raise _back(_say(request, "notice_no_memory", n=number), "/chats/view", chat=chat)
    await deps.store.dashboard.add_audit("dashboard", "forget", chat, number)
    raise _back(_say(request, "notice_forgot", n=number), "/chats/view", chat=chat)


async def api_token_create(request: web.Request) -> web.StreamResponse:
    """A new HTTP API token, shown in this one response only (never in a URL, a log or the store)."""
    name, = await _form(request, "name")
    made, secret = await _tokens(request.app[DEPS]).create(name, "dashboard")
    page = await admin_page(request, created=(made, secret))
    page.headers["Cache-Control"] = "no-store"
    return page


async def api_token_revoke(request: web.Request) -> web.StreamResponse:
    token_id, = await _form(request, "id")
    if not await _tokens(request.app[DEPS]).revoke(token_id, "dashboard"):
        raise _back(_say(request, "notice_no_token", id=token_id))
    raise _back(_say(request, "notice_revoked", id=token_id))


def _tokens(deps: Deps) -> ApiTokens:
    return ApiTokens(deps.store.api_tokens, deps.store.dashboard)


def models(deps: Deps) -> list[str]:
    """The models a chat may pick: the default one and `llm.allowed_models`."""
    return list(dict.fromkeys([deps.services.llm.chat_model, *deps.services.llm.allowed_models]))


def add_routes(app: web.Application) -> None:
    app.router.add_get("/admin", admin_page)
    app.router.add_post("/admin/pairing", pairing)
    app.router.add_post("/admin/approval", approval)
    app.router.add_post("/admin/approval-rules/revoke", approval_rule_revoke)
    app.router.add_post("/admin/chat-settings", chat_settings)
    app.router.add_post("/admin/forget", forget)
    app.router.add_post("/admin/api-tokens", api_token_create)
    app.router.add_post("/admin/api-tokens/revoke", api_token_revoke)
