"""/forget_me (or /forget-me): erase this chat's whole record, after a confirmation (bot/chats/forgetting.py)."""

from __future__ import annotations

from bot.commands.registry import CommandContext, UsageError, command
from bot.replies import Button, Reply


@command("forget_me", "Erase everything this chat holds: messages, memory, files, traces (asks first)",
         "删除本聊天的全部记录：消息、记忆、文件、追踪（会先确认）", "/forget_me [confirm]")
async def forget_me(ctx: CommandContext) -> Reply:
    wanted = ctx.args.strip().lower()
    if wanted not in ("", "confirm"):
        raise UsageError
    forgetting = ctx.services.forgetting
    if forgetting is None:
        return Reply(ctx.t("forget_off"))
    if ctx.msg.is_group and not ctx.is_admin:  # a group's record is everyone's: only an admin erases it, all of it
        return Reply(ctx.t("forget_group_admin"))
    if not wanted:
        key = "forget_ask_group" if ctx.msg.is_group else "forget_ask"
        return Reply(ctx.t(key), buttons=((Button(ctx.t("forget_yes"), "/forget_me confirm"),),))
    receipt = await forgetting.session(ctx.session, f"{ctx.msg.platform}:{ctx.msg.user_id}")
    return Reply(ctx.t("forget_done", receipt="\n".join(f"- {line}" for line in receipt.lines())))
