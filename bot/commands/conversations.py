"""/new, /list, /switch: a chat's conversations, and only this chat's (housekeeping is in `housekeeping`)."""

from __future__ import annotations

from datetime import UTC, datetime

from bot.chats.conversations import AmbiguousConversation, ConversationNotFound
from bot.commands.registry import CommandContext, UsageError, command, page_arg
from bot.replies import Button, Reply

PAGE = 8


@command("new", "Start a new conversation, optionally with a role", "新建会话，可指定角色", "/new [role]",
         navigation=True)
async def new(ctx: CommandContext) -> Reply:
    role = ctx.args.strip() or "default"
    await ctx.services.reload_workspace()  # seed 000: edits to SOUL.md, roles and skills take effect on /new
    roles = ctx.services.prompts.roles()
    if role not in roles:
        return Reply(ctx.t("unknown_role", role=role, roles=", ".join(roles)))
    info = await ctx.services.conversations.new(ctx.session, role)
    return Reply(ctx.t("new_conversation", id=info.id, role=role))


@command("list", "List this chat's conversations (all: archived ones too)", "列出本聊天的会话（all：含已归档）",
         "/list [all] [page]")
async def list_(ctx: CommandContext) -> Reply:
    words = ctx.args.split()
    everything = bool(words) and words[0].lower() == "all"
    page = page_arg(" ".join(words[everything:]))
    chat, store = ctx.session.key.storage_key, ctx.services.store.conversations
    total = await store.count(chat, include_archived=everything)
    infos = await store.recent(chat, limit=PAGE, offset=page * PAGE, include_archived=everything)
    if not infos:
        return Reply(ctx.t("list_empty"))
    now = datetime.now(UTC)
    lines, buttons = [], []
    for info in infos:
        current = info.id == ctx.session.conversation_id
        title = (info.title or ctx.t("untitled")) + (f" · {ctx.t('archived_mark')}" if info.archived else "")
        lines.append(ctx.t("list_line", mark="▶" if current else "·", id=info.id, title=title,
                           count=info.message_count, when=_ago(ctx, now, info.updated_at)))
        if not current:
            buttons.append(Button(ctx.t("switch_button", id=info.id), f"/switch {info.id}"))
    rows = tuple(tuple(buttons[i : i + 2]) for i in range(0, len(buttons), 2))
    more = "/list all" if everything else "/list"
    footer = [Button(ctx.t("more_button"), f"{more} {page + 2}")] if (page + 1) * PAGE < total else []
    if not everything and (archived := await store.count(chat, include_archived=True) - total):
        footer.append(Button(ctx.t("archived_button", n=archived), "/list all"))
    rows += (tuple(footer),) if footer else ()
    title = f"{ctx.t('list_all_title' if everything else 'list_title')} ({total})"
    return Reply("\n".join(lines), title=title, buttons=rows, monospace=True)


@command("switch", "Switch to another conversation (an id prefix is enough)", "切换会话（id 前缀即可）",
         "/switch <id>", navigation=True)
async def switch(ctx: CommandContext) -> Reply:
    wanted = ctx.args.strip()
    if not wanted:
        raise UsageError
    try:
        info = await ctx.services.conversations.switch(ctx.session, wanted)
    except ConversationNotFound:
        return Reply(ctx.t("not_found", id=wanted))
    except AmbiguousConversation as e:
        return Reply(ctx.t("ambiguous", id=wanted, ids=", ".join(e.ids)))
    text = ctx.t("switched", id=info.id, title=info.title or ctx.t("untitled"))
    if info.archived:
        text += " " + ctx.t("unarchived_on_switch")
    return Reply(text, buttons=(manage_buttons(ctx, info.id),))


def manage_buttons(ctx: CommandContext, conv_id: str) -> tuple[Button, ...]:
    """Archive and Delete for the conversation a reply is about (rename needs words, so it stays typed)."""
    return (Button(ctx.t("archive_button"), f"/archive {conv_id}"),
            Button(ctx.t("delete_button"), f"/delete {conv_id}"))


def _ago(ctx: CommandContext, now: datetime, then: datetime) -> str:
    """How long ago, in the chat's language: `5m` / `5 分钟前`, and under a minute `just now` / `刚刚`."""
    seconds = int((now - then).total_seconds())
    for unit, size in (("days", 86400), ("hours", 3600), ("minutes", 60)):
        if seconds >= size:
            return ctx.t(f"ago_{unit}", n=seconds // size)
    return ctx.t("ago_now")
