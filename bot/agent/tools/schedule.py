"""`schedule`: the model creates a reminder or a recurring job when the user asks in plain words.

It makes the same job rows as /remind and /every, reads times in the chat's time zone with the same parser,
and answers with the due time in that zone so the model can confirm it to the user.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime
from zoneinfo import ZoneInfo

from bot.agent.tools.registry import ToolContext, ToolRegistry
from bot.scheduler.recurrence import local_to_utc
from bot.scheduler.service import JobAction, Owner, Schedules, TooManyJobs, describe_every, local_time
from bot.scheduler.when import Schedule, TimeFormError, parse_every, parse_remind

MayCreate = Callable[[str, str, bool], bool]  # (platform, user id, is group) → allowed by group_commands

DESCRIPTION = (
    "Schedule a reminder or a recurring task in this chat. Use it when the user asks to be reminded or wants "
    "something done later or regularly. Times are read in the chat's time zone."
)
PARAMETERS = {
    "type": "object",
    "properties": {
        "text": {"type": "string", "description": "What to remind the user of, or the task to do at that time"},
        "when": {"type": "string", "description": "One-off time: 'in 10m', 'in 2h', 'tomorrow 9:00', "
                 "'2026-12-24 18:00', '明天 9点', or ISO 8601 local time '2026-12-24T18:00'"},
        "every": {"type": "string", "description": "Instead of `when`, for a recurring job: 'day 9:00', "
                  "'weekday 9:00', 'monday 10:00', '30m', or a 5-field cron expression"},
        "run_agent": {"type": "boolean", "description": "true: at that time you answer `text` as a prompt "
                      "(e.g. fetch and summarize); false (default): post `text` as a reminder. Recurring jobs "
                      "always run as a prompt."},
    },
    "required": ["text"],
}


def register(registry: ToolRegistry, schedules: Schedules, may_create: MayCreate) -> None:
    async def schedule(ctx: ToolContext, text: str, when: str = "", every: str = "", run_agent: bool = False) -> str:
        where = ctx.where
        if where is None:
            return "Error: scheduling needs a chat to post in."
        if not may_create(where.platform, ctx.user_id, where.is_group):
            return "Error: in this group only admins may create scheduled jobs; tell the user so."
        if not text.strip() or bool(when.strip()) == bool(every.strip()):
            return "Error: give `text` and exactly one of `when` (one-off) or `every` (recurring)."
        tz, now = await schedules.timezone(ctx.chat), schedules.now()
        try:
            if every.strip():
                found, _ = parse_every(every, now, tz, text=False)
            else:
                found = _iso(when, tz) or parse_remind(when, now, tz, text=False)[0]
        except (TimeFormError, ValueError):
            return (f"Error: cannot read the time {when or every!r}. Use forms like 'in 2h', 'tomorrow 9:00', "
                    "'2026-12-24T18:00' for `when`, or 'day 9:00', '30m' for `every`.")
        if found.first <= now:
            return f"Error: {local_time(found.first, tz)} is in the past (now {local_time(now, tz)})."
        owner = Owner(ctx.chat, where, ctx.conversation_id, ctx.user_id, ctx.user_name)
        action: JobAction = "agent" if run_agent or found.kind != "once" else "post"
        try:
            job = await schedules.create(owner, found, text.strip(), action, tz)
        except TooManyJobs:
            return "Error: this chat has too many scheduled jobs; the user can cancel some with /jobs."
        due = local_time(found.first, tz)
        if found.kind == "once":
            return f"Scheduled job {job.id}: {action} at {due} ({tz.key}). The user can see it with /jobs."
        return (f"Scheduled job {job.id}: every {describe_every(found.kind, found.spec)}, first at {due} "
                f"({tz.key}). The user can see it with /jobs.")

    registry.register("schedule", DESCRIPTION, PARAMETERS, schedule)


def _iso(when: str, tz: ZoneInfo) -> Schedule | None:
    """An ISO 8601 time; without an offset it is read on the chat's wall clock."""
    try:
        parsed = datetime.fromisoformat(when.strip())
    except ValueError:
        return None
    due = local_to_utc(parsed, tz) if parsed.tzinfo is None else parsed
    return Schedule("once", due.isoformat(), due)
