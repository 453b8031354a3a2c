"""A replay beside the answer it replayed (`/tree/replay`): the text diff and both runs' tokens, cost and time,
as /replay shows them in the chat (bot/run/replay_report.py), for a replay stored in the tree at any time since."""

from __future__ import annotations

from aiohttp import web

from bot.httpkit import lang
from bot.i18n import t
from bot.run.replay_report import changed_lines, figure_rows, replay_head, unified
from bot.store.traces import Trace
from bot.tree.model import Message
from bot.web.chats import conversation, param, tree_index
from bot.web.dashboard import DEPS, Deps, render_page


def diff_lines(diff: str) -> list[tuple[str, str]]:
    """Each line of a unified diff with the class it is drawn with: the two file names (only the first two lines:
    a removed "-- x" reads "--- x"), a hunk, added, removed or kept."""
    lines = diff.splitlines()
    names = 2 if lines[:1] and lines[0].startswith("---") else 0
    marks = {"@": "hunk", "+": "add", "-": "del"}
    return [("file" if i < names else marks.get(line[:1], "same"), line) for i, line in enumerate(lines)]


async def run_of(deps: Deps, chat: str, message: Message) -> Trace | None:
    """A message's run, stored or still waiting for its batch (a replay opened right after it was made)."""
    if message.trace_id is None:
        return None
    writer = deps.services.traces
    return await (writer.find(chat, message.trace_id) if writer else deps.store.traces.get(chat, message.trace_id))


async def replay_page(request: web.Request) -> web.Response:
    deps, language = request.app[DEPS], lang.pick(request)
    info = await conversation(deps, param(request, "chat"), param(request, "conv"))
    index, node_id = await tree_index(deps, info), param(request, "node")
    replay = await deps.store.conversations.message(info.chat, info.id, node_id) if node_id in index else None
    head = replay_head(replay.content) if replay is not None else None
    source = next((row.id for row in index.rows.values() if head and row.number == head.number), None)
    original = await deps.store.conversations.message(info.chat, info.id, source) if source else None
    if replay is None or head is None or original is None:
        raise web.HTTPNotFound(text="no such replay in this conversation")
    traces = [await run_of(deps, info.chat, m) for m in (original, replay)]
    names = (f"#{head.number}", t(language, "replay_new"))
    context = {"info": info, "head": head, "original": original, "replay": replay,
               "changed": changed_lines(original.content, head.body),
               "diff": diff_lines(unified(original.content, head.body, *names)),
               "figures": figure_rows(language, *traces), "names": names}
    return render_page("replay.html", request, context)


def add_routes(app: web.Application) -> None:
    app.router.add_get("/tree/replay", replay_page)
