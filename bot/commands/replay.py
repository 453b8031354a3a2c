"""/replay [N] [with model] [tools]: a stored answer's run again, and what changed (see bot/run/replay.py)."""

from __future__ import annotations

from bot.commands.models import choosable
from bot.commands.registry import CommandContext, UsageError, command
from bot.replies import Button, Reply
from bot.run.replay import is_answer, stored_run
from bot.run.replay_report import report


def parse(args: str) -> tuple[int | None, str | None, bool]:
    """`7 with beta tools` → (7, "beta", True); anything else in it is a usage error."""
    words, number, model, tools = args.split(), None, None, False
    while words:
        word = words.pop(0)
        if word.isdigit() and number is None:
            number = int(word)
        elif word == "with" and words and model is None:
            model = words.pop(0)
        elif word == "tools" and not tools:
            tools = True
        else:
            raise UsageError
    return number, model, tools


@command("replay", "Run an answer again (the last, or N) on the same history and recorded tool results; "
         "show what changed", "重新运行一个回答（上一个或第 N 条）：相同的历史和已记录的工具结果；显示差异",
         "/replay [N] [with model] [tools]", navigation=True)
async def replay(ctx: CommandContext) -> Reply:
    number, model, tools = parse(ctx.args)
    session, services = ctx.session, ctx.services
    if model is not None and model not in choosable(services.llm):
        return Reply(ctx.t("model_not_allowed", model=model, allowed=", ".join(choosable(services.llm)) or "—"))
    conv = await services.conversations.tree(session, "")
    answer = conv.by_number(number) if number is not None else next(
        (m for m in reversed(session.path) if is_answer(m)), None)
    run = stored_run(conv, answer) if answer is not None else None
    if answer is None or run is None or answer.number is None:
        return Reply(ctx.t("replay_not_answer", n=number if number is not None else "?"))
    original = None
    if services.traces is not None and answer.trace_id is not None:
        original = await services.traces.find(session.key.storage_key, answer.trace_id)
    model = model or (original.model if original else session.settings.model or services.llm.chat_model)
    head = ctx.t("replay_head", n=answer.number, model=model)
    path, recorded = run
    done = await ctx.rerun.replay(path, None if tools else recorded, model, head)
    if not done.text:
        return Reply(ctx.t("replay_failed"))
    text = report(ctx.lang, answer.content, done.text, original, done.trace, answer.number)
    if done.missed:
        text += "\n\n" + ctx.t("replay_missed", n=done.missed)
    stored = done.stored[-1].number if done.stored else None
    buttons = ((Button(ctx.t("merge_source", n=stored), f"/goto {stored}"),),) if stored is not None else ()
    return Reply(text, buttons=buttons)
