"""/new, /list, /switch: a chat's conversations, and only this chat's."""

from __future__ import annotations

import asyncio
from datetime import UTC, datetime

from bot.agent.skills import SkillSet
from bot.commands.registry import CommandContext, UsageError, command
from bot.hub.conversations import AmbiguousConversation, ConversationNotFound
from bot.replies import Button, Reply

PAGE = 8


@command("new", "Start a new conversation, optionally with a role", "新建会话，可指定角色", "/new [role]",
         navigation=True)
async def new(ctx: CommandContext) -> Reply:
    role = ctx.args.strip() or "default"
    await reload_workspace(ctx)  # seed 000: edits to SOUL.md, roles and skills take effect on /new
    roles = ctx.hub.runner.prompts.roles()
    if role not in roles:
        return Reply(ctx.t("unknown_role", role=role, roles=", ".join(roles)))
    info = await ctx.hub.conversations.new(ctx.session, role)
    return Reply(ctx.t("new_conversation", id=info.id, role=role))


@command("list", "List this chat's conversations", "列出本聊天的会话", "/list [page]")
async def list_(ctx: CommandContext) -> Reply:
    page = _page(ctx.args)
    chat = ctx.session.key.storage_key
    total = await ctx.hub.store.conversations.count(chat)
    infos = await ctx.hub.store.conversations.recent(chat, limit=PAGE, offset=page * PAGE)
    if not infos:
        return Reply(ctx.t("list_empty"))
    now = datetime.now(UTC)
    lines, buttons = [], []
    for info in infos:
        current = info.id == ctx.session.conversation_id
        title = info.title or ctx.t("untitled")
        lines.append(ctx.t("list_line", mark="▶" if current else "·", id=info.id, title=title,
                           count=info.message_count, when=_ago(now, info.updated_at)))
        if not current:
            buttons.append(Button(ctx.t("switch_button", id=info.id), f"/switch {info.id}"))
    rows = tuple(tuple(buttons[i : i + 2]) for i in range(0, len(buttons), 2))
    if (page + 1) * PAGE < total:
        rows += ((Button(ctx.t("more_button"), f"/list {page + 2}"),),)
    title = f"{ctx.t('list_title')} ({total})"
    return Reply("\n".join(lines), title=title, buttons=rows, monospace=True)


@command("switch", "Switch to another conversation (an id prefix is enough)", "切换会话（id 前缀即可）",
         "/switch <id>", navigation=True)
async def switch(ctx: CommandContext) -> Reply:
    wanted = ctx.args.strip()
    if not wanted:
        raise UsageError
    try:
        info = await ctx.hub.conversations.switch(ctx.session, wanted)
    except ConversationNotFound:
        return Reply(ctx.t("not_found", id=wanted))
    except AmbiguousConversation as e:
        return Reply(ctx.t("ambiguous", id=wanted, ids=", ".join(e.ids)))
    return Reply(ctx.t("switched", id=info.id, title=info.title or ctx.t("untitled")))


async def reload_workspace(ctx: CommandContext) -> None:
    """Re-read the workspace files off the event loop."""
    prompts = ctx.hub.runner.prompts

    def load() -> None:
        prompts.reload(SkillSet.load(prompts.workspace / "skills"))

    await asyncio.to_thread(load)


def _page(args: str) -> int:
    args = args.strip()
    if not args:
        return 0
    if not args.isdigit() or int(args) < 1:
        raise UsageError
    return int(args) - 1


def _ago(now: datetime, then: datetime) -> str:
    seconds = int((now - then).total_seconds())
    for unit, size in (("d", 86400), ("h", 3600), ("m", 60)):
        if seconds >= size:
            return f"{seconds // size}{unit}"
    return "now"
