"""/handoff and /resume: carry a conversation to another chat with a one-time code (bot/chats/handoff.py), or link
two direct chats so they share one history (`/handoff link`, `/unlink`: bot/chats/links.py)."""

from __future__ import annotations

import asyncio

from bot.chats.handoff import CODE_TTL, Asker, Linked, Refusal, Resumed
from bot.chats.sessions import Session, SessionKey
from bot.commands.registry import CommandContext, UsageError, command
from bot.replies import Reply


@command("handoff", "Get a one-time code to continue this conversation in another chat (move: archive it here; "
         "link: your DM elsewhere shares this chat's whole history)",
         "获取一次性代码，在另一个聊天中继续当前会话（move：在此处归档；link：你在别处的私聊共享本聊天的全部历史）",
         "/handoff [move|link]", navigation=True)
async def handoff(ctx: CommandContext) -> Reply:
    mode = ctx.args.strip().lower()
    if mode not in ("", "move", "copy", "link"):
        raise UsageError
    handoffs = ctx.services.handoffs
    if handoffs is None:
        return Reply(ctx.t("handoff_off"))
    if mode == "link" and ctx.msg.is_group:
        return Reply(ctx.t("link_dm_only"))
    code = await handoffs.offer(ctx.session, ctx.msg.platform, ctx.msg.user_id, mode == "move", mode == "link")
    key = {"move": "handoff_code_move", "link": "link_code"}.get(mode, "handoff_code")
    return Reply(ctx.t(key, code=code, minutes=int(CODE_TTL // 60)))


@command("unlink", "Give this chat its own history back (after /handoff link)",
         "让本聊天恢复自己的历史（/handoff link 之后）", "/unlink", navigation=True)
async def unlink(ctx: CommandContext) -> Reply:
    handoffs = ctx.services.handoffs
    if handoffs is None:
        return Reply(ctx.t("handoff_off"))
    home = await handoffs.links.unlink(SessionKey.of(ctx.msg))
    if home is None:
        return Reply(ctx.t("unlink_none"))
    return Reply(ctx.t("unlink_done", where=SessionKey.parse(home).platform))


async def resume_handed_off(ctx: CommandContext) -> Reply | None:
    """`/resume CODE` for a live hand-off code (None otherwise: then it names a job). /resume is immediate (a job
    resumes while a run goes on), but taking a conversation switches the session, so that part waits in the
    chat's lane like any turn."""
    handoffs, code = ctx.services.handoffs, ctx.args.strip()
    if handoffs is None or not code or len(code.split()) > 1 or not await handoffs.offered(code):
        return None
    asker = Asker(ctx.msg.platform, ctx.msg.user_id, ctx.msg.is_group, ctx.is_admin, SessionKey.of(ctx.msg))
    done: asyncio.Future[Resumed | Linked | Refusal] = asyncio.get_running_loop().create_future()

    async def take(session: Session) -> None:
        try:
            done.set_result(await handoffs.resume(session, code, asker))
        except Exception as e:
            done.set_exception(e)
            raise

    ctx.services.lanes.run(ctx.session.key, take)
    result = await done
    if isinstance(result, Refusal):
        return Reply(ctx.t(result.value))
    if isinstance(result, Linked):
        return Reply(ctx.t("link_done", where=SessionKey.parse(result.home).platform))
    key = "handoff_moved" if result.moved else "handoff_copied"
    return Reply(ctx.t(key, title=result.title or ctx.t("untitled"), messages=result.messages, files=result.files))
