"""/stop: cancel the running turn (its partial answer is kept, marked interrupted) and clear the queue."""

from __future__ import annotations

from bot.commands.registry import CommandContext, UsageError, command
from bot.replies import Reply


@command("stop", "Stop the current answer and drop queued messages", "停止当前回答并清空排队消息", immediate=True)
async def stop(ctx: CommandContext) -> Reply:
    running, dropped = ctx.hub.sessions.lane(ctx.session.key).stop()
    if not running and not dropped:
        return Reply(ctx.t("nothing_to_stop"))
    return Reply(ctx.t("stopped", dropped=dropped))


@command("pair", "Approve a DM pairing code (admins)", "批准私聊配对码（管理员）", "/pair approve <CODE>",
         immediate=True, admin_only=True)
async def pair(ctx: CommandContext) -> Reply:
    words = ctx.args.split()
    if len(words) != 2 or words[0].lower() != "approve":
        raise UsageError
    user = await ctx.hub.pairing.approve(ctx.msg.platform, words[1])
    if user is None:
        return Reply(ctx.t("pair_unknown", code=words[1]))
    return Reply(ctx.t("pair_approved", user=user))
