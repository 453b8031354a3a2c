"""/compact: summarize the older part of the current branch now, instead of waiting until it outgrows the budget."""

from __future__ import annotations

from bot.agent.provider import LLMError
from bot.commands.registry import CommandContext, command
from bot.replies import Reply


@command("compact", "Summarize the older part of this branch (the summary is shared by branches below it)",
         "总结此分支较早的部分（其下的分支共用该总结）", navigation=True)
async def compact(ctx: CommandContext) -> Reply:
    session = ctx.session
    await ctx.services.conversations.flush(session)
    assert session.conversation_id is not None
    try:
        view = await ctx.services.compactor.compact(session.key.storage_key, session.conversation_id, session.path)
    except LLMError:
        return Reply(ctx.t("compact_failed"))
    if view is None or view.summary is None:
        return Reply(ctx.t("compact_nothing"))
    return Reply(ctx.t("compact_done", covered=view.summary.covered, recent=len(view.recent)))
