"""/usage: tokens and money so far today and this month — yours, this chat's; admins also everyone's."""

from __future__ import annotations

from bot.agent.usage import UsageLedger, user_key
from bot.commands.registry import CommandContext, command
from bot.replies import Reply
from bot.store.usage import UsageTotals

TOP_USERS = 5


@command("usage", "Tokens and cost: yours and this chat's (admins: /usage all)",
         "用量与费用：你的和本聊天的（管理员：/usage all）", "/usage [all]")
async def usage(ctx: CommandContext) -> Reply:
    ledger = ctx.services.usage
    if ledger is None:
        return Reply(ctx.t("usage_off"))
    everyone = ctx.args.strip().lower() == "all"
    if everyone and not ctx.is_admin:
        return Reply(ctx.t("admins_only"))
    me = user_key(ctx.msg.platform, ctx.msg.user_id)
    lines = [await _line(ctx, ledger, "usage_you", user_id=me),
             await _line(ctx, ledger, "usage_chat", chat=ctx.session.key.storage_key)]
    if everyone:
        lines.append(await _line(ctx, ledger, "usage_everyone"))
        await ledger.drain()  # the ranking is the store's: what this process has not stored yet goes first
        top = await ledger.store.breakdown(ledger.today().replace(day=1), "user_id", TOP_USERS)
        lines += ["", ctx.t("usage_top"), *(f"· {user}: {t.tokens} tokens, {_money(t)}" for user, t in top)]
    return Reply("\n".join(lines), title=ctx.t("usage_title"))


async def _line(ctx: CommandContext, ledger: UsageLedger, who: str, chat: str | None = None,
                user_id: str | None = None) -> str:
    today = ledger.today()
    day = await ledger.totals(today, chat, user_id)
    month = await ledger.totals(today.replace(day=1), chat, user_id)
    return ctx.t("usage_line", who=ctx.t(who), day_tokens=day.tokens, day_cost=_money(day),
                 month_tokens=month.tokens, month_cost=_money(month))


def _money(totals: UsageTotals) -> str:
    return f"{totals.cost:.4f}"
