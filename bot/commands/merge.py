"""/merge N: bring another branch's conclusion into this one, so two lines of thought can meet.

The other branch is the path to message N; what it adds beyond the point where it left this branch is
summarized (the cheaper model, as compaction) into one assistant message under the cursor. That message says
it is a merge and which message it came from, and the reply's button goes there, so the source stays one tap
away. The model reads the conclusion as part of this branch from then on.
"""

from __future__ import annotations

from bot.agent.provider import LLMError
from bot.commands.registry import CommandContext, UsageError, command
from bot.replies import Button, Reply
from bot.tree.model import Conversation, Message


def side_branch(conv: Conversation, here: list[Message], number: int) -> list[Message] | None:
    """The messages on the path to `number` below the last one it shares with `here` (oldest first); None when
    there is no such message."""
    target = conv.by_number(number)
    if target is None:
        return None
    shared = {m.id for m in here} | {conv.root_id}
    branch: list[Message] = []
    node: Message | None = target
    while node is not None and node.id not in shared:
        branch.append(node)
        node = conv.messages.get(node.parent_id) if node.parent_id else None
    return branch[::-1]


@command("merge", "Bring message N's branch into this one as a summary (see /tree)",
         "把第 N 条消息所在分支的结论以总结形式并入当前分支（见 /tree）", "/merge <N>", navigation=True)
async def merge(ctx: CommandContext) -> Reply:
    if not ctx.args.strip().isdigit():
        raise UsageError
    number, session = int(ctx.args.strip()), ctx.session
    conv = await ctx.services.conversations.tree(session, "")
    branch = side_branch(conv, session.path, number)
    if branch is None:
        return Reply(ctx.t("goto_missing", n=number))
    if not [m for m in branch if m.role in ("user", "assistant") and m.content.strip()]:
        return Reply(ctx.t("merge_same_branch", n=number))
    try:
        conclusion = await ctx.services.compactor.conclusion(branch)
    except LLMError:
        return Reply(ctx.t("merge_failed"))
    note = Message.new("assistant", f"{ctx.t('merge_head', n=number)}\n\n{conclusion}")
    await ctx.services.conversations.append(session, note)
    await ctx.services.conversations.flush(session)
    merged = next((m.number for m in reversed(session.path) if m.id == note.id), None)
    return Reply(ctx.t("merge_done", n=number, covered=len(branch), new=merged if merged is not None else "?"),
                 buttons=((Button(ctx.t("merge_source", n=number), f"/goto {number}"), Button("/tree", "/tree")),))
