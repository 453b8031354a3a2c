"""/stop (cancel the running turn, its partial answer kept and marked interrupted, and clear the queue), /pair,
and the approval commands: /approve, /deny, /approvals."""

from __future__ import annotations

from bot.agent.approvals import SCOPES, Scope
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


@command("approve", "Approve a tool action the assistant asked for", "批准助手请求的工具操作",
         "/approve [id] [once|conv|always]", immediate=True)
async def approve(ctx: CommandContext) -> Reply:
    words = ctx.args.split()
    if words and words[0].lower() in SCOPES:
        words.insert(0, "")  # no id: the one request waiting in this chat
    scope = SCOPES.get(words[1].lower()) if len(words) > 1 else Scope.ONCE
    if scope is None or len(words) > 2:
        raise UsageError
    return _decide(ctx, words[0] if words else "", scope)


@command("deny", "Refuse a tool action the assistant asked for", "拒绝助手请求的工具操作", "/deny [id]",
         immediate=True)
async def deny(ctx: CommandContext) -> Reply:
    return _decide(ctx, ctx.args.strip(), None)


def _decide(ctx: CommandContext, approval_id: str, scope: Scope | None) -> Reply:
    """Runs outside the lane: the run that asked is waiting in it."""
    chat = ctx.session.key.storage_key
    by = f"{ctx.msg.platform}:{ctx.msg.user_id}"
    return Reply(ctx.services.approvals.decide(chat, approval_id, scope, ctx.is_admin, by))


@command("approvals", "List or revoke this chat's standing approvals (admins)", "列出或撤销本聊天的长期批准（管理员）",
         "/approvals [revoke <n>]", immediate=True, admin_only=True)
async def approvals(ctx: CommandContext) -> Reply:
    words, chat = ctx.args.split(), ctx.session.key.storage_key
    if not words:
        rules = await ctx.services.approvals.rules(chat)
        if not rules:
            return Reply(ctx.t("approvals_none"))
        lines = [ctx.t("approvals_rule", id=r.id, kind=r.kind, command=r.command,
                       where=ctx.t("approvals_conv") if r.conversation else ctx.t("approvals_chat")) for r in rules]
        return Reply("\n".join([ctx.t("approvals_head"), *lines]))
    if len(words) != 2 or words[0].lower() != "revoke" or not words[1].lstrip("#").isdecimal():
        raise UsageError
    rule_id = int(words[1].lstrip("#"))
    gone = await ctx.services.approvals.revoke(rule_id, chat, f"{ctx.msg.platform}:{ctx.msg.user_id}")
    return Reply(ctx.t("approvals_revoked" if gone else "approvals_unknown", id=rule_id))
