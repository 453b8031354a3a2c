"""Chats, a chat's conversations, a conversation's tree, a node's detail, branch here, JSONL export."""

from __future__ import annotations

from aiohttp import web

from bot.run.replay_report import replay_head
from bot.store import ConversationInfo, Tally
from bot.tree.jsonl import export_jsonl
from bot.web import roles
from bot.web.actions import NotInChat, branch_here
from bot.web.admin import models
from bot.web.dashboard import DEPS, Deps, render_page, url
from bot.web.treeview import TreeIndex

PAGE = 50
MEMORIES_SHOWN = 200
TRANSCRIPT_LIMIT = 4000  # characters of each path message in a node's transcript


def param(request: web.Request, name: str, source: object = None) -> str:
    value = (source if source is not None else request.query).get(name, "")  # type: ignore[attr-defined]
    return value.strip() if isinstance(value, str) else ""


async def conversation(deps: Deps, chat: str, conv_id: str) -> ConversationInfo:
    info = await deps.store.conversations.get(chat, conv_id) if chat and conv_id else None
    if info is None:
        raise web.HTTPNotFound(text="no such conversation")
    return info


async def tree_index(deps: Deps, info: ConversationInfo) -> TreeIndex:
    version = (info.message_count, info.current_message_id, deps.services.prompts.role_text(info.role))
    index = deps.trees.get(info.chat, info.id, version)
    if index is None:
        rows = await deps.store.dashboard.tree_nodes(info.chat, info.id)
        index = TreeIndex(rows, info.root_id, version[1], version[2])
        deps.trees.put(info.chat, info.id, version, index)
    return index


async def tallies(deps: Deps, info: ConversationInfo) -> dict[str, Tally]:
    """Each rated answer's 👍/👎 counts, drawn beside its node (read afresh: a press changes no tree version)."""
    return await deps.store.feedback.tallies(info.chat, info.id)


async def chats_page(request: web.Request) -> web.Response:
    deps = request.app[DEPS]
    query, platform = param(request, "q"), param(request, "platform")
    page = int(request.query["page"]) if request.query.get("page", "").isdigit() else 1
    offset = (max(page, 1) - 1) * PAGE
    chats = (await roles.chats_of(request, query, PAGE + 1, offset) if roles.who(request).scoped
             else await deps.store.dashboard.list_chats(query, platform, limit=PAGE + 1, offset=offset))
    context = {"chats": chats[:PAGE], "more": len(chats) > PAGE, "page": page, "q": query, "platform": platform,
               "platforms": sorted({*(a.name for a in deps.health.adapters), "console", "web"})}
    return render_page("chats.html", request, context)


async def chat_page(request: web.Request) -> web.Response:
    deps = request.app[DEPS]
    chat = param(request, "chat")
    conversations = await deps.store.conversations.recent(chat, limit=200, include_archived=True)
    if not conversations:
        raise web.HTTPNotFound(text="no such chat")
    active = await deps.store.conversations.active(chat)
    context = {"chat": chat, "conversations": conversations, "active": active, "models": models(deps),
               "settings": await deps.store.settings.get(chat), "language": deps.cfg.language,
               "memories": await deps.store.memories.page(chat, limit=MEMORIES_SHOWN),
               "notice": param(request, "notice")}
    return render_page("chat.html", request, context)


async def node_context(deps: Deps, info: ConversationInfo, index: TreeIndex, node_id: str) -> dict[str, object]:
    if node_id not in index:
        raise web.HTTPNotFound(text="no such message in this conversation")
    message = await deps.store.conversations.message(info.chat, info.id, node_id)
    path = await deps.store.conversations.chain(info.chat, info.id, node_id)
    trace = await deps.store.traces.get(info.chat, message.trace_id) if message and message.trace_id else None
    return {"info": info, "node": index.node(node_id), "message": message, "transcript": path,
            "limit": TRANSCRIPT_LIMIT, "trace": trace, "replay": replay_head(message.content) if message else None}


async def tree_page(request: web.Request) -> web.Response:
    deps = request.app[DEPS]
    info = await conversation(deps, param(request, "chat"), param(request, "conv"))
    index = await tree_index(deps, info)
    selected = param(request, "node")
    detail = await node_context(deps, info, index, selected) if selected else {}
    context = {**detail, "info": info, "tree": index.tree(), "detail": bool(detail),
               "notice": param(request, "notice"), "feedback": await tallies(deps, info)}
    return render_page("tree.html", request, context)


async def node_fragment(request: web.Request) -> web.Response:
    deps = request.app[DEPS]
    info = await conversation(deps, param(request, "chat"), param(request, "conv"))
    index = await tree_index(deps, info)
    context = await node_context(deps, info, index, param(request, "node"))
    return render_page("_detail.html", request, context)


async def gap_fragment(request: web.Request) -> web.Response:
    """The hidden middle of a long run, as list items replacing its placeholder."""
    deps = request.app[DEPS]
    info = await conversation(deps, param(request, "chat"), param(request, "conv"))
    index, first = await tree_index(deps, info), param(request, "at")
    count = param(request, "count")
    if first not in index or not count.isdigit():
        raise web.HTTPNotFound(text="no such part of the tree")
    context = {"info": info, "nodes": index.segment(first, int(count)), "feedback": await tallies(deps, info)}
    return render_page("_gap.html", request, context)


async def subtree_fragment(request: web.Request) -> web.Response:
    """A folded branch, unfolded (its own branches within a fresh budget)."""
    deps = request.app[DEPS]
    info = await conversation(deps, param(request, "chat"), param(request, "conv"))
    index, head = await tree_index(deps, info), param(request, "head")
    if head not in index:
        raise web.HTTPNotFound(text="no such part of the tree")
    context = {"info": info, "branch": index.branch(head, force=True), "feedback": await tallies(deps, info)}
    return render_page("_subtree.html", request, context)


async def panel_fragment(request: web.Request) -> web.Response:
    """The tree of a chat's active conversation, for a panel beside a live chat (e.g. the web chat)."""
    deps, chat = request.app[DEPS], param(request, "chat")
    active = await deps.store.conversations.active(chat) if chat else None
    info = await deps.store.conversations.get(chat, active) if active else None
    if info is None:
        return render_page("_panel.html", request, {"info": None})
    index = await tree_index(deps, info)
    context = {"info": info, "tree": index.tree(), "feedback": await tallies(deps, info)}
    return render_page("_panel.html", request, context)


async def trace_page(request: web.Request) -> web.Response:
    """One run's trace, only through the chat it ran in (another chat's id is "not found", like an unknown one)."""
    deps, chat = request.app[DEPS], param(request, "chat")
    found = await deps.store.traces.get(chat, param(request, "id")) if chat else None
    if found is None:
        raise web.HTTPNotFound(text="no such trace in this chat")
    return render_page("trace.html", request, {"chat": chat, "trace": found})


async def export(request: web.Request) -> web.Response:
    deps = request.app[DEPS]
    info = await conversation(deps, param(request, "chat"), param(request, "conv"))
    conv = await deps.store.conversations.load(info.chat, info.id, "")
    if conv is None:
        raise web.HTTPNotFound(text="no such conversation")
    body = export_jsonl(conv, {"chat": info.chat, "role": info.role, "title": info.title})
    return web.Response(text=body, content_type="application/x-ndjson", headers={
        "Content-Disposition": f'attachment; filename="conversation-{info.id}.jsonl"'})


async def branch(request: web.Request) -> web.StreamResponse:
    deps, form = request.app[DEPS], await request.post()
    chat, conv_id, node = param(request, "chat", form), param(request, "conv", form), param(request, "node", form)
    try:
        outcome = await branch_here(deps.services, deps.store.dashboard, "dashboard", chat, conv_id, node)
    except NotInChat:
        raise web.HTTPNotFound(text="no such message in this chat") from None
    notice = "branched" if outcome == "moved" else outcome
    raise web.HTTPSeeOther(url("/tree", chat=chat, conv=conv_id, node=node, notice=notice))


def add_routes(app: web.Application) -> None:
    app.router.add_get("/chats", chats_page)
    app.router.add_get("/chats/view", chat_page)
    app.router.add_get("/tree", tree_page)
    app.router.add_get("/tree/node", node_fragment)
    app.router.add_get("/tree/gap", gap_fragment)
    app.router.add_get("/tree/subtree", subtree_fragment)
    app.router.add_get("/tree/panel", panel_fragment)
    app.router.add_get("/tree/export", export)
    app.router.add_get("/trace", trace_page)
    app.router.add_post("/tree/branch", branch)
