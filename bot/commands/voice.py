"""/voice: whether this chat's answers also come as voice notes (bot/run/voice.py)."""

from __future__ import annotations

from bot.commands.registry import CommandContext, UsageError, command
from bot.replies import Button, Reply

MODES = ("on", "auto", "off")


@command("voice", "Answer with voice notes too: on, auto (when you send one) or off",
         "同时用语音回答：on、auto（你发语音时）或 off", "/voice [on|auto|off]", navigation=True)
async def voice(ctx: CommandContext) -> Reply:
    wanted = ctx.args.strip().lower()
    llm = ctx.services.llm
    if wanted and wanted not in MODES:
        raise UsageError
    if llm.speech_model is None:
        return Reply(ctx.t("voice_unavailable"))
    if wanted:
        await ctx.services.set_setting(ctx.session, voice=wanted)
    mode = ctx.session.settings.voice or llm.voice_replies
    buttons = tuple(Button(ctx.t(f"voice_mode_{m}"), f"/voice {m}") for m in MODES if m != mode)
    key = "voice_set" if wanted else "voice_current"
    return Reply(ctx.t(key, mode=ctx.t(f"voice_mode_{mode}")), buttons=(buttons,))
