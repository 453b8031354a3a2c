"""User-facing strings in English and Chinese; `t(lang, key, **values)` picks one and fills it in."""

from __future__ import annotations

STRINGS: dict[str, tuple[str, str]] = {
    # (en, zh)
    "text_only": (
        "I can only read text for now — please send your request as a message (a caption works too).",
        "目前只能读取文字——请用文字发送你的请求（图片说明文字也可以）。",
    ),
    "unknown_command": ("Unknown command /{name}. Try /help.", "未知命令 /{name}。试试 /help。"),
    "usage": ("Usage: {usage}", "用法：{usage}"),
    "llm_failed": (
        "Sorry, the model provider failed ({reason}). Your message is saved — send /retry to try again. "
        "(error {error_id})",
        "抱歉，模型服务出错（{reason}）。你的消息已保存——发送 /retry 重试。（错误 {error_id}）",
    ),
    "llm_failed_again": (
        "The model provider is still failing; I'll stay quiet until it recovers. (error {error_id})",
        "模型服务仍然不可用；恢复前我不会重复提示。（错误 {error_id}）",
    ),
    "reason_rate_limit": ("rate limited", "请求过于频繁"),
    "reason_timeout": ("timed out", "超时"),
    "reason_connection": ("cannot connect", "无法连接"),
    "reason_server": ("server error", "服务器错误"),
    "reason_context": ("conversation too long", "对话过长"),
    "reason_auth": ("bad API key or permissions", "API 密钥或权限错误"),
    "reason_turns": ("too many tool steps", "工具调用步骤过多"),
    "reason_other": ("unexpected error", "意外错误"),
    "internal_error": (
        "Sorry, something went wrong on my side. (error {error_id})",
        "抱歉，我这边出错了。（错误 {error_id}）",
    ),
    "empty_answer": ("(the model returned an empty answer)", "（模型返回了空回答）"),
    "busy": (
        "I'm still working on earlier messages here; please wait a moment and send it again.",
        "我还在处理这里之前的消息，请稍等后再发送。",
    ),
    "new_conversation": ("New conversation `{id}` (role: {role}).", "已创建新会话 `{id}`（角色：{role}）。"),
    "unknown_role": ("Unknown role {role!r}. Available: {roles}", "未知角色 {role!r}。可用角色：{roles}"),
    "list_title": ("Conversations", "会话列表"),
    "list_empty": ("No conversations yet — just send a message.", "还没有会话——直接发消息即可开始。"),
    "list_line": ("{mark} `{id}` {title} · {count} msgs · {when}", "{mark} `{id}` {title} · {count} 条 · {when}"),
    "untitled": ("(empty)", "（空）"),
    "not_found": ("No conversation {id!r} in this chat.", "本聊天中没有会话 {id!r}。"),
    "ambiguous": ("{id!r} matches several conversations: {ids}", "{id!r} 匹配多个会话：{ids}"),
    "switched": ("Switched to conversation `{id}` ({title}).", "已切换到会话 `{id}`（{title}）。"),
    "tree_title": ("Conversation {id}", "会话 {id}"),
    "goto_done": ("Moved to [{n}] {preview}. Your next message branches from here.",
                  "已切换到 [{n}] {preview}。下一条消息将从这里分叉。"),
    "goto_missing": ("There is no message [{n}] — see /tree.", "没有序号为 [{n}] 的消息——请查看 /tree。"),
    "retry_nothing": ("There is no message of yours to answer again.", "没有可以重新回答的消息。"),
    "stopped": ("Stopped. {dropped} queued message(s) dropped.", "已停止。丢弃了 {dropped} 条排队消息。"),
    "nothing_to_stop": ("Nothing is running.", "当前没有正在运行的任务。"),
    "interrupted": ("(interrupted)", "（已中断）"),
    "status": (
        "Conversation `{id}` ({title})\nModel: {model}\nMessages: {count}\nCursor: [{cursor}] (see /tree)\n"
        "Role: {role}",
        "会话 `{id}`（{title}）\n模型：{model}\n消息数：{count}\n光标：[{cursor}]（见 /tree）\n角色：{role}",
    ),
    "skills_title": ("Skills", "技能"),
    "skills_empty": ("No skills installed.", "没有安装技能。"),
    "roles_title": ("Roles", "角色"),
    "lang_set": ("Language set to English.", "语言已切换为中文。"),
    "model_current": ("Model: {model}. Allowed here: {allowed}", "当前模型：{model}。可选：{allowed}"),
    "model_not_allowed": (
        "Model {model!r} is not allowed. Choose one of: {allowed}",
        "不允许使用模型 {model!r}。可选：{allowed}",
    ),
    "model_only_default": (
        "Model: {model}, the only one configured. To let chats choose others, list them under "
        "llm.allowed_models in bothub.yaml and restart.",
        "当前模型：{model}，也是唯一配置的模型。要允许选择其他模型，"
        "请在 bothub.yaml 的 llm.allowed_models 中列出它们并重启。",
    ),
    "model_set": ("This chat now uses {model}.", "本聊天现在使用 {model}。"),
    "not_allowed": ("Sorry, this bot is not open to you here.", "抱歉，此机器人未对你开放。"),
    "pairing": (
        "This bot needs an admin's approval first. Your pairing code is {code} (valid for 1 hour): "
        "ask an admin to send /pair approve {code}.",
        "使用前需要管理员批准。你的配对码是 {code}（1 小时内有效）：请管理员发送 /pair approve {code}。",
    ),
    "pair_approved": ("Approved: user {user} can now talk to me.", "已批准：用户 {user} 现在可以和我对话了。"),
    "pair_unknown": ("No pending pairing with code {code} (codes expire after an hour).",
                     "没有配对码为 {code} 的待批准请求（配对码 1 小时后过期）。"),
    "admins_only": ("Only admins can do that here.", "只有管理员可以在这里这样做。"),
    "tree_button": ("Go to [{n}]", "转到 [{n}]"),
    "switch_button": ("Switch {id}", "切换 {id}"),
    "more_button": ("More ›", "更多 ›"),
    "help": (
        "I'm an assistant in this chat. Talk to me{mention_hint}. Commands:",
        "我是这个聊天里的助手。直接和我说话{mention_hint}。命令：",
    ),
    "mention_hint": (" (in groups: @mention me or reply to me)", "（群聊中请 @我 或回复我）"),
    "memory_title": ("Memory", "记忆"),
    "memory_empty": ("Nothing remembered in this chat yet.", "本聊天还没有任何记忆。"),
    "memory_no_page": ("There is no page {page}; memory has {pages} page(s).",
                       "没有第 {page} 页；记忆共 {pages} 页。"),
    "memory_forgot": ("Forgot memory #{n}. The ones after it moved up by one.",
                      "已删除第 {n} 条记忆。其后的记忆序号依次减一。"),
    "memory_missing": ("No memory #{n} in this chat — see /memory.", "本聊天中没有第 {n} 条记忆——请查看 /memory。"),
    "doctor_workspace_ok": ("workspace {path}", "工作区 {path}"),
    "doctor_workspace_new": ("workspace {path} does not exist yet (created on first start, or run `bothub init`)",
                             "工作区 {path} 尚不存在（首次启动时创建，或运行 `bothub init`）"),
    "doctor_restores": ("{name} is missing: start-up restores the default", "缺少 {name}：启动时会恢复默认文件"),
    "doctor_workspace_problem": ("workspace: {problem} — the bot will not start until it is fixed",
                                 "工作区：{problem} —— 修复前机器人无法启动"),
    "doctor_llm_missing": ("LLM: set OPENAI_API_KEY (OpenAI) or OPENAI_BASE_URL (a local OpenAI-compatible server)",
                           "LLM：请设置 OPENAI_API_KEY（OpenAI）或 OPENAI_BASE_URL（本地 OpenAI 兼容服务）"),
    "doctor_llm_refused": ("LLM at {where}: the API key was refused", "LLM（{where}）：API 密钥被拒绝"),
    "doctor_llm_unreachable": ("LLM at {where}: not reachable ({error})", "LLM（{where}）：无法连接（{error}）"),
    "doctor_llm_no_model": ("LLM at {where}: model {model!r} not offered (has: {models})",
                            "LLM（{where}）：没有模型 {model!r}（可用：{models}）"),
    "doctor_llm_ok": ("LLM at {where}: reachable, model {model}", "LLM（{where}）：可连接，模型 {model}"),
    "doctor_no_platform": ("no platform configured: `bothub run` opens the console chat",
                           "未配置任何平台：`bothub run` 会打开控制台聊天"),
    "reminder": ("⏰ Reminder: {text}", "⏰ 提醒：{text}"),
    "reminder_for": ("⏰ Reminder for {name}: {text}", "⏰ 给 {name} 的提醒：{text}"),
    "job_missed": ("⏰ I was offline when this was due ({when}), so it comes late: {text} (job `{id}`)",
                   "⏰ 到期时（{when}）我不在线，现在补上：{text}（任务 `{id}`）"),
    "remind_usage": (
        "Usage: /remind <when> <text>. When: `in 30s`, `in 10m`, `in 2h`, `in 1h30m`, `tomorrow 9:00`, "
        "`today 18:30`, `18:00`, `2026-12-24 18:00`, `明天 9点`, `30分钟后`.",
        "用法：/remind <时间> <内容>。时间：`30分钟后`、`2小时后`、`明天 9点`、`明天下午3点半`、`今天 18:30`、"
        "`2026-12-24 18:00`、`in 10m`、`tomorrow 9:00`。",
    ),
    "every_usage": (
        "Usage: /every <schedule> <prompt>. Schedule: `day 9:00`, `weekday 9:00`, `monday 10:00`, `30m`, `2h`, "
        "or a cron expression such as `0 9 * * 1-5` (at least every minute apart).",
        "用法：/every <周期> <提示词>。周期：`每天 9点`、`工作日 9点`、`每周一 10点`、`每30分钟`、`day 9:00`、"
        "`30m`，或 cron 表达式如 `0 9 * * 1-5`（间隔至少一分钟）。",
    ),
    "remind_past": ("{when} has already passed.", "{when} 已经过去了。"),
    "remind_set": ("⏰ Reminder `{id}` set for {when}.", "⏰ 提醒 `{id}` 已设定在 {when}。"),
    "every_set": ("🔁 Job `{id}` runs {every}; first run {when}.", "🔁 任务 `{id}` 周期：{every}；首次运行 {when}。"),
    "too_many_jobs": ("This chat already has {n} jobs — cancel one first (/jobs).",
                      "本聊天已有 {n} 个任务——请先取消一个（/jobs）。"),
    "jobs_title": ("Jobs ({tz})", "定时任务（{tz}）"),
    "jobs_empty": ("No jobs here. Try /remind or /every.", "这里还没有定时任务。试试 /remind 或 /every。"),
    "jobs_line": ("`{id}` {state} · {every} · next {when} · {text}", "`{id}` {state} · {every} · 下次 {when} · {text}"),
    "job_once": ("once", "一次"),
    "job_heartbeat": ("heartbeat every {every}", "心跳 每 {every}"),
    "job_every": ("every {every}", "每 {every}"),
    "state_active": ("▶", "▶"),
    "state_paused": ("⏸ paused", "⏸ 已暂停"),
    "job_cancel_button": ("Cancel {id}", "取消 {id}"),
    "job_pause_button": ("Pause {id}", "暂停 {id}"),
    "job_resume_button": ("Resume {id}", "恢复 {id}"),
    "job_cancelled": ("Job `{id}` cancelled.", "任务 `{id}` 已取消。"),
    "job_paused": ("Job `{id}` paused.", "任务 `{id}` 已暂停。"),
    "job_resumed": ("Job `{id}` resumed; next run {when}.", "任务 `{id}` 已恢复；下次运行 {when}。"),
    "job_not_found": ("No job {id!r} in this chat — see /jobs.", "本聊天中没有任务 {id!r}——请查看 /jobs。"),
    "tz_current": ("Time zone here: {tz} (local time {now}). Change it with /tz Area/City.",
                   "本聊天时区：{tz}（当地时间 {now}）。用 /tz 地区/城市 修改。"),
    "tz_set": ("Time zone set to {tz} (local time {now}). Existing jobs keep the zone they were made in.",
               "时区已设为 {tz}（当地时间 {now}）。已有任务保持创建时的时区。"),
    "tz_unknown": ("{tz!r} is not a time zone I know. Use an IANA name such as Europe/Berlin or Asia/Shanghai.",
                   "不认识时区 {tz!r}。请使用 IANA 名称，例如 Asia/Shanghai 或 Europe/Berlin。"),
    "heartbeat_on": ("💓 Heartbeat on: every {every} I go through HEARTBEAT.md and speak only if something needs you.",
                     "💓 心跳已开启：每 {every} 检查一次 HEARTBEAT.md，只有需要你关注时才发言。"),
    "heartbeat_off": ("Heartbeat off.", "心跳已关闭。"),
    "heartbeat_status": ("Heartbeat is {state} here. /heartbeat on|off", "本聊天心跳：{state}。/heartbeat on|off"),
    "heartbeat_no_file": ("There is no HEARTBEAT.md in the workspace, so there is no checklist to run.",
                          "工作区中没有 HEARTBEAT.md，没有可执行的检查清单。"),
    "scheduler_off": ("Scheduling is turned off on this bot.", "此机器人未启用定时任务。"),
}


def t(lang: str, key: str, **values: object) -> str:
    en, zh = STRINGS[key]
    template = zh if lang == "zh" else en
    return template.format(**values) if values else template
