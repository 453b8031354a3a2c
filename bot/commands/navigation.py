"""/tree, /goto (and bare /N), /retry: moving around the conversation tree."""

from __future__ import annotations

from bot.commands.models import choosable
from bot.commands.registry import CommandContext, UsageError, command
from bot.replies import Button, Reply
from bot.tree.model import Message
from bot.tree.view import TreeLabels, render_tree

PREVIEW = 60


def labels(lang: str) -> TreeLabels:
    if lang == "zh":
        return TreeLabels(system="系统提示词", you="你", ai="AI", tool_result="工具结果",
                          tool_call="工具调用", here="← 当前位置", hidden="… 省略 {n} 条消息",
                          summary="≡ 到此为止的 {n} 条消息已总结")
    return TreeLabels()


@command("tree", "Show this conversation's message tree", "显示当前会话的消息树")
async def tree(ctx: CommandContext) -> Reply:
    # the root shows the role's own text, the part of the system prompt a person recognises
    conv = await ctx.services.conversations.tree(ctx.session, ctx.services.prompts.role_text(ctx.session.role))
    summaries = await ctx.services.compactor.summaries(ctx.session.key.storage_key, conv.id)
    summarized = {mid: s.covered for mid, s in summaries.items()}
    models = await _answered_by(ctx, conv.messages[conv.current_message_id])
    view = render_tree(conv, ctx.caps.tree_budget - len(models), labels(ctx.lang), summarized)
    buttons = [Button(ctx.t("tree_button", n=n), f"/goto {n}") for n, _ in view.goto_targets]
    rows = tuple(tuple(buttons[i : i + 4]) for i in range(0, len(buttons), 4))
    return Reply(view.text + models, title=ctx.t("tree_title", id=conv.id), buttons=rows, monospace=True)


async def _answered_by(ctx: CommandContext, node: Message) -> str:
    """For the answer under the cursor that more than one model wrote (a failover), a line naming them in
    order, a failed one marked; else nothing."""
    traces = ctx.services.traces
    if traces is None or node.role != "assistant" or node.trace_id is None:
        return ""
    trace = await traces.find(ctx.session.key.storage_key, node.trace_id)
    steps = [s for s in trace.steps if s.kind == "model"] if trace else []
    if len({s.name for s in steps}) < 2:
        return ""
    models = " → ".join(s.name + (" ✗" if s.outcome == "error" else "") for s in steps)
    return "\n\n" + ctx.t("tree_models", n=node.number, models=models)


@command("goto", "Move the cursor to message N of /tree; the next message branches there",
         "把光标移到 /tree 中的第 N 条消息，下一条消息从这里分叉", "/goto <N>", navigation=True)
async def goto(ctx: CommandContext) -> Reply:
    if not ctx.args.strip().isdigit():
        raise UsageError
    n = int(ctx.args.strip())
    conv = await ctx.services.conversations.tree(ctx.session, "")
    target = conv.by_number(n)  # numbers never change, so an old /tree's button still means this message
    if target is None:
        return Reply(ctx.t("goto_missing", n=n))
    await ctx.services.conversations.move_cursor(ctx.session, target.id)
    preview = " ".join(target.content.split())[:PREVIEW] or f"({target.role})"
    return Reply(ctx.t("goto_done", n=n, preview=preview))


@command("retry", "Answer your last message again, as a new branch (with another model if named)",
         "重新回答你的上一条消息（作为新分支；可指定另一个模型）", "/retry [model]", navigation=True)
async def retry(ctx: CommandContext) -> Reply | None:
    model = ctx.args.strip() or None
    allowed = choosable(ctx.services.llm)
    if model is not None and model not in allowed:
        return Reply(ctx.t("model_not_allowed", model=model, allowed=", ".join(allowed) or "—"))
    path = ctx.session.path
    last_user = next((m for m in reversed(path) if m.role == "user"), None)
    if last_user is None:
        return Reply(ctx.t("retry_nothing"))
    await ctx.services.conversations.move_cursor(ctx.session, last_user.id)
    await ctx.rerun.again(last_user.content, model)
    return None
