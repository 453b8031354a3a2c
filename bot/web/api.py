"""The JSON API under /api/v1/ (documented in docs/openapi.yaml): the same reads and actions as the pages."""

from __future__ import annotations

import json
from dataclasses import asdict
from typing import Any

from aiohttp import web

from bot.store import ConversationInfo
from bot.tree.model import Message
from bot.web.actions import NotInChat, branch_here
from bot.web.chats import conversation, tree_index
from bot.web.dashboard import DEPS

MAX_LIMIT = 200


def _limit(request: web.Request, default: int = 50) -> int:
    value = request.query.get("limit", "")
    return min(int(value), MAX_LIMIT) if value.isdigit() else default


def _json(value: Any) -> web.Response:
    return web.json_response(value, dumps=lambda v: json.dumps(v, default=str, ensure_ascii=False))


def _conversation(info: ConversationInfo) -> dict[str, Any]:
    return {"id": info.id, "chat": info.chat, "title": info.title, "role": info.role,
            "cursor": info.current_message_id, "messages": info.message_count,
            "created_at": info.created_at, "updated_at": info.updated_at, "archived": info.archived}


def _message(msg: Message) -> dict[str, Any]:
    return {"id": msg.id, "parent_id": msg.parent_id, "role": msg.role, "content": msg.content,
            "created_at": msg.created_at, "author": msg.author, "tool_calls": msg.tool_calls,
            "tool_call_id": msg.tool_call_id, "interrupted": msg.interrupted, "trace_id": msg.trace_id}


async def chats(request: web.Request) -> web.Response:
    q = request.query
    found = await request.app[DEPS].store.dashboard.list_chats(q.get("q", ""), q.get("platform", ""),
                                                               limit=_limit(request))
    return _json({"chats": [{**asdict(c), "platform": c.platform} for c in found]})


async def conversations(request: web.Request) -> web.Response:
    infos = await request.app[DEPS].store.conversations.recent(request.query.get("chat", ""), limit=_limit(request),
                                                               include_archived=True)
    return _json({"conversations": [_conversation(i) for i in infos]})


async def tree(request: web.Request) -> web.Response:
    deps = request.app[DEPS]
    info = await conversation(deps, request.query.get("chat", ""), request.query.get("conv", ""))
    index = await tree_index(deps, info)
    nodes = [{**asdict(index.node(row.id)), "parent_id": row.parent_id} for row in index.rows.values()]
    return _json({"conversation": _conversation(info), "root_id": info.root_id, "nodes": nodes})


async def message(request: web.Request) -> web.Response:
    deps = request.app[DEPS]
    info = await conversation(deps, request.query.get("chat", ""), request.query.get("conv", ""))
    node = request.query.get("node", "")
    found = await deps.store.conversations.message(info.chat, info.id, node)
    if found is None:
        raise web.HTTPNotFound(text="no such message")
    path = await deps.store.conversations.chain(info.chat, info.id, node)
    return _json({"message": _message(found), "path": [_message(m) for m in path]})


async def trace(request: web.Request) -> web.Response:
    """A run's trace, only through the chat it ran in (another chat's id is "not found", like an unknown one)."""
    found = await request.app[DEPS].store.traces.get(request.query.get("chat", ""), request.query.get("id", ""))
    if found is None:
        raise web.HTTPNotFound(text="no such trace in this chat")
    return _json({"trace": asdict(found)})


async def search(request: web.Request) -> web.Response:
    q = request.query
    hits = await request.app[DEPS].store.dashboard.search_messages(q.get("q", ""), q.get("chat", ""),
                                                                   q.get("platform", ""), _limit(request))
    return _json({"hits": [{**asdict(h), "snippet": [{"text": t, "match": m} for t, m in h.snippet]}
                           for h in hits]})


async def branch(request: web.Request) -> web.Response:
    deps = request.app[DEPS]
    try:
        body = await request.json()
        chat, conv_id, node = str(body["chat"]), str(body["conv"]), str(body["node"])
    except (ValueError, KeyError, TypeError):
        return web.json_response({"error": "send JSON with chat, conv and node"}, status=400)
    try:
        outcome = await branch_here(deps.services, deps.store.dashboard, "api", chat, conv_id, node)
    except NotInChat:
        return web.json_response({"error": "no such message in this chat"}, status=404)
    return web.json_response({"status": outcome}, status=200 if outcome == "moved" else 202)


def add_routes(app: web.Application) -> None:
    app.router.add_get("/api/v1/chats", chats)
    app.router.add_get("/api/v1/conversations", conversations)
    app.router.add_get("/api/v1/tree", tree)
    app.router.add_get("/api/v1/message", message)
    app.router.add_get("/api/v1/trace", trace)
    app.router.add_get("/api/v1/search", search)
    app.router.add_post("/api/v1/branch", branch)
