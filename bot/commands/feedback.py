"""/feedback up|down <conversation> <message>: what a press on an answer's 👍/👎 sends (bot/replies.py `Feedback`),
never typed. The rating is stored on the answer's node, one per person (a new press replaces it); the platform's
control shows the choice itself, so a kept rating gets no message. An answer that is no longer in the tree (its
chat forgotten, or stored under another id after a rare id collision) gets a polite line. It runs at once, outside
the chat's lane, so a press is kept while the next answer is still streaming."""

from __future__ import annotations

from bot.commands.registry import CommandContext, UsageError, command
from bot.replies import Reply

RATINGS = {"up": True, "down": False}


@command("feedback", "Rate an answer (what its 👍/👎 send)", "评价一个回答（👍/👎 发送的命令）",
         "/feedback up|down <conversation> <message>", immediate=True, hidden=True)
async def feedback(ctx: CommandContext) -> Reply | None:
    words = ctx.args.split()
    if len(words) != 3 or words[0].lower() not in RATINGS:
        raise UsageError
    rating, conversation_id, message_id = RATINGS[words[0].lower()], words[1], words[2]
    person = f"{ctx.msg.platform}:{ctx.msg.user_id}"
    kept = await ctx.services.store.feedback.rate(ctx.session.key.storage_key, conversation_id, message_id, person,
                                                  rating)
    return None if kept else Reply(ctx.t("feedback_gone"))
