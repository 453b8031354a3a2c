"""/forget_me (or /forget-me): erase this chat's whole record, after a confirmation (bot/chats/forgetting.py); in a
group, a member's own part of it (`/forget_me group`: an admin erases the whole group's)."""

from __future__ import annotations

from bot.commands.registry import CommandContext, UsageError, command
from bot.replies import Button, Reply


@command("forget_me", "Erase everything this chat holds (in a group: your own messages; admins: `group`, all of it)",
         "删除本聊天的全部记录（群组中：你自己的消息；管理员：`group` 删除全部）", "/forget_me [group] [confirm]")
async def forget_me(ctx: CommandContext) -> Reply:
    words = ctx.args.strip().lower().split()
    whole = "group" in words
    if set(words) - {"group", "confirm"} or (whole and not ctx.msg.is_group):
        raise UsageError
    forgetting = ctx.services.forgetting
    if forgetting is None:
        return Reply(ctx.t("forget_off"))
    if whole and not ctx.is_admin:  # a group's record is everyone's: only an admin erases all of it
        return Reply(ctx.t("forget_group_admin"))
    own_part = ctx.msg.is_group and not whole
    if "confirm" not in words:
        key = "forget_ask_own" if own_part else "forget_ask_group" if whole else "forget_ask"
        again = "/forget_me group confirm" if whole else "/forget_me confirm"
        return Reply(ctx.t(key), buttons=((Button(ctx.t("forget_yes"), again),),))
    if own_part:
        receipt = await forgetting.author(ctx.session, ctx.msg.platform, ctx.msg.user_id)
    else:
        receipt = await forgetting.session(ctx.session, f"{ctx.msg.platform}:{ctx.msg.user_id}")
    return Reply(ctx.t("forget_done", receipt="\n".join(f"- {line}" for line in receipt.lines())))
