"""/duel [model …] and /vote N: the last question answered by several models side by side, and the better
answer chosen (its branch becomes the cursor; the vote is stored on the node, for win rates per model)."""

from __future__ import annotations

from bot.commands.models import choosable
from bot.commands.registry import CommandContext, UsageError, command
from bot.delivery.columns import MIN_SHARE
from bot.replies import Button, Column, Reply, split_text
from bot.run.duel import MAX_CONTENDERS, question_path
from bot.store.votes import Entry
from bot.tree.model import Conversation


@command("duel", "Answer your last message with two or more models or agents at once, side by side (tools off)",
         "用两个或更多模型或智能体同时回答你的上一条消息，并排显示（不使用工具）", "/duel [model|agent …]",
         navigation=True)
async def duel(ctx: CommandContext) -> Reply | None:
    allowed = list(dict.fromkeys([*choosable(ctx.services.llm), *ctx.rerun.agents]))
    models = ctx.args.split() or ctx.services.llm.allowed_models[:2]
    if len(models) < 2:
        return Reply(ctx.t("duel_usage", allowed=", ".join(allowed) or "—"))
    unknown = [m for m in models if m not in allowed]
    if unknown:
        return Reply(ctx.t("model_not_allowed", model=unknown[0], allowed=", ".join(allowed)))
    if len(models) > MAX_CONTENDERS:
        return Reply(ctx.t("duel_too_many", n=MAX_CONTENDERS))
    path = question_path(ctx.session)
    if path is None:
        return Reply(ctx.t("retry_nothing"))
    await ctx.rerun.duel(path, models)
    return None


@command("vote", "Choose the better answer of a duel: its branch becomes the current one",
         "选出对决中更好的回答：它所在的分支成为当前分支", "/vote <N>", navigation=True)
async def vote(ctx: CommandContext) -> Reply:
    if not ctx.args.strip().isdigit():
        raise UsageError
    n, session = int(ctx.args.strip()), ctx.session
    conv = await ctx.services.conversations.tree(session, "")
    target = conv.by_number(n)
    votes = ctx.services.store.votes
    chosen = None if target is None else await votes.vote(
        session.key.storage_key, conv.id, target.id, f"{ctx.msg.platform}:{ctx.msg.user_id}")
    if target is None or chosen is None:
        return Reply(ctx.t("vote_not_duel", n=n))
    await ctx.services.conversations.move_cursor(session, target.id)
    if ctx.services.metrics is not None:
        rates = await votes.win_rates()
        ctx.services.metrics.duel_vote(chosen.model, [(r.name, r.rate) for r in rates])
    title = ctx.t("vote_done", n=n, model=chosen.model)
    tree = ((Button("/tree", "/tree"),),)
    if not (ctx.msg.is_button and ctx.caps.replace_pressed):
        return Reply(title, buttons=tree)
    rivals = await votes.rivals(session.key.storage_key, conv.id, target.id)
    if 2 <= len(rivals) <= ctx.caps.columns:  # the pressed card shows the duel in columns: it stays, choice marked
        share = max(MIN_SHARE, ctx.caps.max_text // len(rivals) - len(title))
        return Reply("", title, tree, columns=tuple(_column(ctx, conv, i, e, target.id, share)
                                                    for i, e in enumerate(rivals, 1)))
    return Reply(target.content, title=title, buttons=tree)  # the pressed answer is replaced: it stays, marked


def _column(ctx: CommandContext, conv: Conversation, i: int, entry: Entry, chosen: str, share: int) -> Column:
    """One answer of the duel as its card showed it: its title (the chosen one's marked) and the head of its text."""
    node = conv.messages.get(entry.message_id)
    head = ctx.t("duel_title", i=i, model=entry.model)
    parts = split_text(node.content, share) if node is not None and node.content.strip() else [""]
    return Column(f"🏆 {head}" if entry.message_id == chosen else head, parts[0])
