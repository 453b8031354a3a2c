"""/stop: cancel the running turn (its partial answer is kept, marked interrupted) and clear the queue."""

from __future__ import annotations

from bot.commands.registry import CommandContext, UsageError, command
from bot.replies import Reply


@command("stop", "Stop the current answer and drop queued messages", "停止当前回答并清空排队消息", immediate=True,
         navigation=True)
async def stop(ctx: CommandContext) -> Reply:
    running, dropped = await ctx.services.lanes.interrupt(ctx.session.key)
    if not running and not dropped:
        return Reply(ctx.t("nothing_to_stop"))
    return Reply(ctx.t("stopped", dropped=dropped))


@command("pair", "Approve a DM pairing code (admins)", "批准私聊配对码（管理员）", "/pair approve <CODE>",
         immediate=True, admin_only=True)
async def pair(ctx: CommandContext) -> Reply:
    words = ctx.args.split()
    if len(words) != 2 or words[0].lower() != "approve":
        raise UsageError
    user = await ctx.services.pairing.approve(ctx.msg.platform, words[1])
    if user is None:
        return Reply(ctx.t("pair_unknown", code=words[1]))
    return Reply(ctx.t("pair_approved", user=user))


@command("approve", "Approve a tool action the assistant asked for", "批准助手请求的工具操作", "/approve <id>",
         immediate=True)
async def approve(ctx: CommandContext) -> Reply:
    return _decide(ctx, True)


@command("deny", "Refuse a tool action the assistant asked for", "拒绝助手请求的工具操作", "/deny <id>",
         immediate=True)
async def deny(ctx: CommandContext) -> Reply:
    return _decide(ctx, False)


def _decide(ctx: CommandContext, approve: bool) -> Reply:
    """Runs outside the lane: the run that asked is waiting in it."""
    approval_id = ctx.args.strip()
    if not approval_id:
        raise UsageError
    chat = ctx.session.key.storage_key
    return Reply(ctx.services.approvals.decide(chat, approval_id, approve, ctx.is_admin))
