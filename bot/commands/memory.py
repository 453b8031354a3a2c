"""/memory, /forget: this chat's long-term memory, numbered the way `remember` answers ("Remembered #3")."""

from __future__ import annotations

from bot.agent.memory import format_entry
from bot.commands.registry import CommandContext, UsageError, command, page_arg
from bot.replies import Button, Reply

PAGE = 10
PREVIEW = 80  # characters of a memory's content on its /memory line


@command("memory", "List what I remember in this chat", "列出我在本聊天中记住的内容", "/memory [page]")
async def memory(ctx: CommandContext) -> Reply:
    page = page_arg(ctx.args)
    chat = ctx.session.key.storage_key
    total = await ctx.services.store.memories.count(chat)
    entries = await ctx.services.store.memories.page(chat, limit=PAGE, offset=page * PAGE)
    if not entries:
        if total == 0:
            return Reply(ctx.t("memory_empty"))
        return Reply(ctx.t("memory_no_page", page=page + 1, pages=-(-total // PAGE)))
    width = len(str(page * PAGE + len(entries)))
    lines = [f"{number:>{width}}. {format_entry(entry, PREVIEW)}"
             for number, entry in enumerate(entries, start=page * PAGE + 1)]
    rows: tuple[tuple[Button, ...], ...] = ()
    if (page + 1) * PAGE < total:
        rows = ((Button(ctx.t("more_button"), f"/memory {page + 2}"),),)
    return Reply("\n".join(lines), title=f"{ctx.t('memory_title')} ({total})", buttons=rows, monospace=True)


@command("forget", "Forget memory number N (see /memory)", "删除第 N 条记忆（见 /memory）", "/forget <N>",
         navigation=True)
async def forget(ctx: CommandContext) -> Reply:
    wanted = ctx.args.strip().lstrip("#")
    if not wanted.isdecimal() or int(wanted) < 1:
        raise UsageError
    number = int(wanted)
    memory = ctx.services.memory
    if memory is not None and await memory.forget(ctx.session.key.storage_key, number):
        return Reply(ctx.t("memory_forgot", n=number))
    return Reply(ctx.t("memory_missing", n=number))
