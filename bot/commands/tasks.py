"""/task <prompt> (start a background sub-agent), /tasks (this chat's tasks), and the task half of /cancel.

/task runs in the lane (its side branch hangs under the conversation's cursor, so the writes before it must be
stored); /tasks and /cancel run at once, on the chat's owner, which is where its tasks run.
"""

from __future__ import annotations

from bot.commands.registry import CommandContext, UsageError, command
from bot.commands.services import TaskControl
from bot.replies import Button, Reply
from bot.store.tasks import NewTask, Task, TooManyTasks
from bot.tree.model import utc_now

BUTTON_TASKS = 5  # running tasks that get a cancel button in /tasks (each is one row)


def _control(ctx: CommandContext) -> TaskControl:
    control = ctx.services.tasks
    if control is None:
        raise UsageError(ctx.t("tasks_off"))
    return control


@command("task", "Start a background task (a sub-agent) on a prompt", "启动后台任务（子智能体）处理一段提示",
         "/task <prompt>", navigation=True)
async def task(ctx: CommandContext) -> Reply | None:
    control, prompt, session = _control(ctx), ctx.args.strip(), ctx.session
    if not prompt:
        raise UsageError
    await ctx.services.conversations.flush(session)
    assert session.conversation_id is not None and session.cursor is not None
    msg = ctx.msg
    spec = NewTask(session.key.storage_key, session.conversation_id, session.cursor, prompt, msg.chat, msg.user_id,
                   msg.user_name, ctx.lang)
    try:
        await control.start(spec)
    except TooManyTasks:
        return Reply(ctx.t("tasks_too_many", n=control.limit))
    return None  # the task's own progress message is the answer


@command("tasks", "List this chat's background tasks", "列出本聊天的后台任务", immediate=True)
async def tasks(ctx: CommandContext) -> Reply:
    found = await _control(ctx).recent(ctx.session.key.storage_key)
    if not found:
        return Reply(ctx.t("tasks_none"))
    now = utc_now()
    lines = [ctx.t("tasks_line", id=x.label, state=ctx.t(f"tasks_state_{x.state}"), prompt=x.headline,
                   minutes=int((now - x.created_at).total_seconds() // 60)) for x in found]
    running = [x for x in found if x.state == "running"][:BUTTON_TASKS]
    rows = tuple((Button(ctx.t("tasks_cancel_button", id=x.label), f"/cancel {x.label}"),) for x in running)
    return Reply("\n".join([ctx.t("tasks_head"), *lines]), buttons=rows)


async def cancel_task(ctx: CommandContext, task_id: int) -> Reply:
    """/cancel t<n>: the schedule's /cancel hands task ids here."""
    label = f"t{task_id}"
    found: Task | None = await _control(ctx).cancel(ctx.session.key.storage_key, task_id)
    if found is None:
        return Reply(ctx.t("task_not_found", id=label))
    if found.state != "running":
        return Reply(ctx.t("task_ended_already", id=label, state=ctx.t(f"tasks_state_{found.state}")))
    return Reply(ctx.t("task_cancelled_reply", id=label))

