"""/help, /status, /skills, /roles, /lang, /model, /think: what the bot is and how it is set up in this chat."""

from __future__ import annotations

from bot.commands.registry import COMMANDS, CommandContext, UsageError, command
from bot.replies import Reply
from bot.tree.model import Message


@command("help", "Show this help", "显示帮助", immediate=True)
async def help_(ctx: CommandContext) -> Reply:
    hint = ctx.t("mention_hint") if ctx.msg.is_group else ""
    zh = ctx.lang == "zh"
    lines = [ctx.t("help", mention_hint=hint), ""]
    lines += [f"{cmd.usage} — {cmd.help[1] if zh else cmd.help[0]}" for cmd in COMMANDS.values() if not cmd.hidden]
    return Reply("\n".join(lines), title="bothub")


@command("status", "Conversation, model, message count and cursor", "当前会话、模型、消息数和光标")
async def status(ctx: CommandContext) -> Reply:
    info = await ctx.services.conversations.info(ctx.session)
    if info is None:
        raise UsageError
    text = ctx.t("status", id=info.id, title=info.title or ctx.t("untitled"), model=model_of(ctx),
                 count=info.message_count, cursor=cursor_number(ctx.session.path), role=info.role)
    view = await ctx.services.compactor.view(ctx.session.key.storage_key, info.id, ctx.session.path)
    if view.summary is not None:
        text += "\n" + ctx.t("status_summarized", covered=view.summary.covered, total=len(ctx.session.path))
    return Reply(text)


def cursor_number(path: list[Message]) -> int:
    """The cursor as /tree and /goto know it (the root is 0); the path is stored by now, so numbered."""
    return path[-1].number or 0 if path else 0


@command("skills", "List skills and whether they are enabled", "列出技能及启用状态", "/skills [reload]")
async def skills(ctx: CommandContext) -> Reply:
    prompts = ctx.services.prompts
    if ctx.args.strip() == "reload":
        if not ctx.is_admin:
            return Reply(ctx.t("admins_only"))
        await ctx.services.reload_workspace()
    found = prompts.skills.skills
    if not found:
        return Reply(ctx.t("skills_empty"))
    return Reply("\n".join(skill.status_line() for skill in found), title=ctx.t("skills_title"), monospace=True)


@command("roles", "List the roles /new accepts", "列出 /new 可用的角色")
async def roles(ctx: CommandContext) -> Reply:
    return Reply("\n".join(f"· {r}" for r in ctx.services.prompts.roles()), title=ctx.t("roles_title"))


@command("lang", "Set the bot's language in this chat", "设置本聊天的机器人语言", "/lang en|zh", navigation=True)
async def lang(ctx: CommandContext) -> Reply:
    choice = ctx.args.strip().lower()
    if choice not in ("en", "zh"):
        raise UsageError
    await ctx.services.set_setting(ctx.session, language=choice)
    ctx.lang = choice
    return Reply(ctx.t("lang_set"))


@command("model", "Show or choose this chat's model", "查看或选择本聊天使用的模型", "/model [name]",
         navigation=True)
async def model(ctx: CommandContext) -> Reply:
    allowed = ctx.services.llm.allowed_models
    choice = ctx.args.strip()
    if not allowed:
        return Reply(ctx.t("model_only_default", model=model_of(ctx)))
    if not choice:
        return Reply(ctx.t("model_current", model=model_of(ctx), allowed=", ".join(allowed)))
    if choice not in allowed:
        return Reply(ctx.t("model_not_allowed", model=choice, allowed=", ".join(allowed)))
    await ctx.services.set_setting(ctx.session, model=choice)
    return Reply(ctx.t("model_set", model=choice))


@command("think", "Thinking mode: show the model's reasoning (folded) or not",
         "思考模式：是否显示模型的推理过程（折叠）", "/think [on|off]", navigation=True)
async def think(ctx: CommandContext) -> Reply:
    choice = ctx.args.strip().lower()
    if choice not in ("on", "off"):
        if choice:
            raise UsageError
        chosen = ctx.session.settings.thinking
        on = ctx.services.llm.show_thinking if chosen is None else chosen == "on"
        return Reply(ctx.t("think_current", state=ctx.t("think_on" if on else "think_off")))
    await ctx.services.set_setting(ctx.session, thinking=choice)
    return Reply(ctx.t("think_set", state=ctx.t(f"think_{choice}")))


def model_of(ctx: CommandContext) -> str:
    return ctx.session.settings.model or ctx.services.llm.chat_model
