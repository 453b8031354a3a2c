"""/rename, /delete, /undo, /archive, /unarchive, /search: keeping a chat's conversations tidy.

Every id is looked up in this chat only, so another chat's conversation is "not found" like a random id.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable

from bot.chats.conversations import AmbiguousConversation, ConversationNotFound
from bot.chats.housekeeping import UNDO_WINDOW, Removed
from bot.commands.registry import CommandContext, UsageError, command
from bot.replies import Button, Reply
from bot.store import ConversationInfo
from bot.store.conversations import TITLE_MAX

MINUTES = int(UNDO_WINDOW.total_seconds() // 60)


def _title(ctx: CommandContext, info: ConversationInfo) -> str:
    return info.title or ctx.t("untitled")


async def _by_id(ctx: CommandContext, act: Callable[[str], Awaitable[Reply]]) -> Reply:
    """Run `act` on the id argument, answering a missing or ambiguous id politely."""
    wanted = ctx.args.strip()
    if not wanted or len(wanted.split()) > 1:
        raise UsageError
    try:
        return await act(wanted)
    except ConversationNotFound:
        return Reply(ctx.t("not_found", id=wanted))
    except AmbiguousConversation as e:
        return Reply(ctx.t("ambiguous", id=wanted, ids=", ".join(e.ids)))


def _removed(ctx: CommandContext, key: str, removed: Removed, buttons: tuple[Button, ...]) -> Reply:
    gone = removed.conversation
    text = ctx.t(key, id=gone.id, title=_title(ctx, gone), minutes=MINUTES)
    if removed.moved_to is not None:
        text += "\n" + ctx.t("moved_to", id=removed.moved_to.id, title=_title(ctx, removed.moved_to))
    return Reply(text, buttons=(buttons,))


@command("rename", "Rename this conversation", "重命名当前会话", "/rename <title>", navigation=True)
async def rename(ctx: CommandContext) -> Reply:
    title = " ".join(ctx.args.split())
    if not title:
        raise UsageError
    if len(title) > TITLE_MAX:
        return Reply(ctx.t("rename_too_long", max=TITLE_MAX, n=len(title)))
    info = await ctx.services.housekeeping.rename(ctx.session, title)
    return Reply(ctx.t("rename_done", title=info.title if info else title))


@command("delete", "Delete a conversation (/undo brings it back for 10 minutes)", "删除会话（10 分钟内可 /undo）",
         "/delete <id>", navigation=True)
async def delete(ctx: CommandContext) -> Reply:
    async def act(wanted: str) -> Reply:
        removed = await ctx.services.housekeeping.delete(ctx.session, wanted)
        return _removed(ctx, "deleted", removed, (Button(ctx.t("undo_button"), "/undo"),))

    return await _by_id(ctx, act)


@command("undo", "Bring back the conversation deleted last (within 10 minutes)", "恢复最近删除的会话（10 分钟内）",
         navigation=True)
async def undo(ctx: CommandContext) -> Reply:
    restored = await ctx.services.housekeeping.undo(ctx.session)
    if restored is None:
        return Reply(ctx.t("undo_nothing", minutes=MINUTES))
    return Reply(ctx.t("undone", id=restored.id, title=_title(ctx, restored)))


@command("archive", "Archive a conversation: hidden from /list, kept whole", "归档会话：不在 /list 中显示，内容保留",
         "/archive <id>", navigation=True)
async def archive(ctx: CommandContext) -> Reply:
    async def act(wanted: str) -> Reply:
        removed = await ctx.services.housekeeping.archive(ctx.session, wanted)
        button = Button(ctx.t("unarchive_button", id=removed.conversation.id), f"/unarchive {removed.conversation.id}")
        return _removed(ctx, "archived", removed, (button,))

    return await _by_id(ctx, act)


@command("unarchive", "Show an archived conversation in /list again", "让已归档的会话重新出现在 /list 中",
         "/unarchive <id>", navigation=True)
async def unarchive(ctx: CommandContext) -> Reply:
    async def act(wanted: str) -> Reply:
        found = await ctx.services.conversations.resolve(ctx.session, wanted)
        if not found.archived:
            return Reply(ctx.t("not_archived", id=found.id, title=_title(ctx, found)))
        info = await ctx.services.housekeeping.unarchive(ctx.session, found.id)
        return Reply(ctx.t("unarchived", id=info.id, title=_title(ctx, info)),
                     buttons=((Button(ctx.t("switch_button", id=info.id), f"/switch {info.id}"),),))

    return await _by_id(ctx, act)


@command("search", "Search this chat's conversations", "搜索本聊天的会话", "/search <words>")
async def search(ctx: CommandContext) -> Reply:
    query = " ".join(ctx.args.split())
    if not query:
        raise UsageError
    found = await ctx.services.housekeeping.search(ctx.session, query)
    if not found:
        return Reply(ctx.t("search_none", query=query))
    lines, buttons = [], []
    for match in found:
        info = match.conversation
        snippet = "".join(f"**{text}**" if hit else text for text, hit in match.snippet)
        mark = f" · {ctx.t('archived_mark')}" if info.archived else ""
        lines.append(ctx.t("search_line", id=info.id, title=_title(ctx, info), mark=mark,
                           snippet=" ".join(snippet.split())))
        if info.id != ctx.session.conversation_id:
            buttons.append(Button(ctx.t("switch_button", id=info.id), f"/switch {info.id}"))
    rows = tuple(tuple(buttons[i : i + 2]) for i in range(0, len(buttons), 2))
    return Reply("\n".join(lines), title=ctx.t("search_title", query=query), buttons=rows)
