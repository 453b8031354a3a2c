"""/remind, /every, /jobs, /cancel, /pause, /resume, /tz, /heartbeat: this chat's scheduled jobs.

They run at once (outside the lane): none of them touches the conversation. Creating, cancelling and
pausing follow `group_commands` in groups, like /new.
"""

from __future__ import annotations

from datetime import timedelta

from bot.chats.handoff import looks_like_code
from bot.commands.handoff import resume_handed_off
from bot.commands.registry import CommandContext, UsageError, command
from bot.commands.tasks import cancel_task
from bot.replies import Button, Reply
from bot.scheduler.service import HEARTBEAT_FILE, JobAction, Owner, Schedules, TooManyJobs, describe_every, local_time
from bot.scheduler.when import Schedule, TimeFormError, parse_every, parse_remind
from bot.store import Job
from bot.store.tasks import parse_label

PREVIEW = 40
BUTTON_JOBS = 10  # jobs that get buttons in /jobs (each is one row)


def _schedules(ctx: CommandContext) -> Schedules:
    schedules = ctx.services.schedules
    if schedules is None:
        raise UsageError(ctx.t("scheduler_off"))
    return schedules


def _chat(ctx: CommandContext) -> str:
    return ctx.session.key.storage_key


async def _create(ctx: CommandContext, schedule: Schedule, text: str, action: JobAction) -> Job:
    schedules = _schedules(ctx)
    owner = Owner(_chat(ctx), ctx.msg.chat, ctx.session.conversation_id, ctx.msg.user_id, ctx.msg.user_name)
    try:
        return await schedules.create(owner, schedule, text, action, await schedules.timezone(_chat(ctx)))
    except TooManyJobs:
        raise UsageError(ctx.t("too_many_jobs", n=schedules.cfg.max_jobs_per_chat)) from None


def _cancel_row(ctx: CommandContext, job: Job) -> tuple[tuple[Button, ...], ...]:
    return ((Button(ctx.t("job_cancel_button", id=job.id), f"/cancel {job.id}"),),)


@command("remind", "Remind this chat at a time", "在指定时间提醒", "/remind <when> <text>", immediate=True,
         navigation=True)
async def remind(ctx: CommandContext) -> Reply:
    schedules = _schedules(ctx)
    tz, now = await schedules.timezone(_chat(ctx)), schedules.now()
    try:
        schedule, text = parse_remind(ctx.args, now, tz)
    except TimeFormError:
        raise UsageError(ctx.t("remind_usage")) from None
    if schedule.first <= now:
        return Reply(ctx.t("remind_past", when=local_time(schedule.first, tz)))
    job = await _create(ctx, schedule, text, "post")
    return Reply(ctx.t("remind_set", id=job.id, when=local_time(schedule.first, tz)), buttons=_cancel_row(ctx, job))


@command("every", "Run a prompt on a schedule", "按周期运行提示词", "/every <schedule> <prompt>", immediate=True,
         navigation=True)
async def every(ctx: CommandContext) -> Reply:
    schedules = _schedules(ctx)
    tz = await schedules.timezone(_chat(ctx))
    try:
        schedule, prompt = parse_every(ctx.args, schedules.now(), tz)
    except TimeFormError:
        raise UsageError(ctx.t("every_usage")) from None
    job = await _create(ctx, schedule, prompt, "agent")
    return Reply(ctx.t("every_set", id=job.id, every=describe_every(job.kind, job.spec),
                       when=local_time(schedule.first, tz)), buttons=_cancel_row(ctx, job))


@command("jobs", "List this chat's scheduled jobs", "列出本聊天的定时任务", immediate=True)
async def jobs(ctx: CommandContext) -> Reply:
    schedules = _schedules(ctx)
    found = await schedules.jobs(_chat(ctx))
    if not found:
        return Reply(ctx.t("jobs_empty"))
    tz = await schedules.timezone(_chat(ctx))
    lines: list[str] = []
    rows: list[tuple[Button, ...]] = []
    for job in found:
        text = " ".join(job.text.split())
        state = "active" if job.enabled else "paused"
        lines.append(ctx.t("jobs_line", id=job.id, state=ctx.t(f"state_{state}"), every=_every(ctx, job),
                           when=local_time(job.next_due, tz) if job.next_due else "-",
                           text=text if len(text) <= PREVIEW else text[: PREVIEW - 1] + "…"))
        if len(rows) < BUTTON_JOBS:
            toggle = (Button(ctx.t("job_resume_button", id=job.id), f"/resume {job.id}") if not job.enabled
                      else Button(ctx.t("job_pause_button", id=job.id), f"/pause {job.id}"))
            rows.append((toggle, Button(ctx.t("job_cancel_button", id=job.id), f"/cancel {job.id}")))
    return Reply("\n".join(lines), title=ctx.t("jobs_title", tz=tz.key), buttons=tuple(rows))


def _every(ctx: CommandContext, job: Job) -> str:
    if job.kind == "once":
        return ctx.t("job_once")
    key = "job_heartbeat" if job.heartbeat else "job_every"
    return ctx.t(key, every=describe_every(job.kind, job.spec))


def _job_id(ctx: CommandContext) -> str:
    job_id = ctx.args.strip()
    if not job_id:
        raise UsageError
    return job_id


@command("cancel", "Cancel a scheduled job or a background task", "取消定时任务或后台任务", "/cancel <id>",
         immediate=True, navigation=True)
async def cancel(ctx: CommandContext) -> Reply:
    job_id = _job_id(ctx)
    if (task_id := parse_label(job_id)) is not None:  # t3: a background task's
        return await cancel_task(ctx, task_id)
    if await _schedules(ctx).cancel(_chat(ctx), job_id):
        return Reply(ctx.t("job_cancelled", id=job_id))
    return Reply(ctx.t("job_not_found", id=job_id))


@command("pause", "Pause a scheduled job", "暂停定时任务", "/pause <id>", immediate=True, navigation=True)
async def pause(ctx: CommandContext) -> Reply:
    job_id = _job_id(ctx)
    job = await _schedules(ctx).pause(_chat(ctx), job_id)
    return Reply(ctx.t("job_paused", id=job.id) if job else ctx.t("job_not_found", id=job_id))


@command("resume", "Resume a paused job, or continue a conversation handed off with /handoff",
         "恢复已暂停的任务，或继续通过 /handoff 转来的会话", "/resume <id|code>", immediate=True, navigation=True)
async def resume(ctx: CommandContext) -> Reply:
    if (handed_off := await resume_handed_off(ctx)) is not None:
        return handed_off
    job_id = _job_id(ctx)
    job = await ctx.services.schedules.resume(_chat(ctx), job_id) if ctx.services.schedules else None
    if job is None and looks_like_code(job_id):  # a spent or expired hand-off code, or a mistyped job id
        return Reply(ctx.t("resume_unknown", id=job_id))
    schedules = _schedules(ctx)
    if job is None:
        return Reply(ctx.t("job_not_found", id=job_id))
    assert job.next_due is not None
    return Reply(ctx.t("job_resumed", id=job.id, when=local_time(job.next_due, await schedules.timezone(_chat(ctx)))))


@command("tz", "Show or set this chat's time zone", "查看或设置本聊天的时区", "/tz [Area/City]", immediate=True,
         navigation=True)
async def tz(ctx: CommandContext) -> Reply:
    schedules = _schedules(ctx)
    wanted = ctx.args.strip()
    if not wanted:
        zone = await schedules.timezone(_chat(ctx))
        return Reply(ctx.t("tz_current", tz=zone.key, now=local_time(schedules.now(), zone)))
    try:
        zone = await schedules.set_timezone(_chat(ctx), wanted)
    except ValueError:
        return Reply(ctx.t("tz_unknown", tz=wanted))
    return Reply(ctx.t("tz_set", tz=zone.key, now=local_time(schedules.now(), zone)))


@command("heartbeat", "Turn the HEARTBEAT.md checklist on or off here", "开启或关闭本聊天的 HEARTBEAT.md 检查",
         "/heartbeat [on|off]", immediate=True, navigation=True)
async def heartbeat(ctx: CommandContext) -> Reply:
    schedules = _schedules(ctx)
    choice = ctx.args.strip().lower()
    current = [job for job in await schedules.jobs(_chat(ctx)) if job.heartbeat]
    interval = schedules.heartbeat_every
    every_ = describe_every("interval", str(interval))
    if choice not in ("on", "off"):
        if choice:
            raise UsageError
        return Reply(ctx.t("heartbeat_status", state="on" if current else "off"))
    if choice == "off":
        for job in current:
            await schedules.cancel(_chat(ctx), str(job.id))
        return Reply(ctx.t("heartbeat_off"))
    if not (ctx.services.prompts.workspace / HEARTBEAT_FILE).is_file():
        return Reply(ctx.t("heartbeat_no_file"))
    if not current:
        first = schedules.now() + timedelta(seconds=interval)
        await _create(ctx, Schedule("interval", str(interval), first), HEARTBEAT_FILE, "heartbeat")
    return Reply(ctx.t("heartbeat_on", every=every_))
