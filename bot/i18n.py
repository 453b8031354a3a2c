"""User-facing strings in English and Chinese; `t(lang, key, **values)` picks one and fills it in."""

from __future__ import annotations

from bot.i18n_cli import CLI_STRINGS
from bot.i18n_fleet import FLEET_STRINGS
from bot.i18n_help import HELP_STRINGS
from bot.i18n_tasks import TASK_STRINGS
from bot.i18n_tree import TREE_STRINGS
from bot.i18n_web import WEB_STRINGS

STRINGS: dict[str, tuple[str, str]] = {
    # (en, zh)
    "text_only": (
        "I can only read text for now — please send your request as a message (a caption works too).",
        "目前只能读取文字——请用文字发送你的请求（图片说明文字也可以）。",
    ),
    "media_too_big": ("{name} is larger than {limit}, so I didn't take it.", "{name} 超过 {limit}，未接收。"),
    "media_empty": ("{name} is empty (0 bytes), so I didn't take it.", "{name} 是空文件（0 字节），未接收。"),
    "media_mismatch": ("{name} says it is {mime}, but its contents are something else, so I didn't take it.",
                       "{name} 声称是 {mime}，但内容不符，未接收。"),
    "media_bad_image": ("{name} is not an image I can open (broken, or far too many pixels).",
                        "{name} 不是可以打开的图片（已损坏或像素过多）。"),
    "media_too_many": ("That's more than {limit} files in one message; please send at most {limit} at a time.",
                       "一条消息超过 {limit} 个文件；请每次最多发送 {limit} 个。"),
    "media_folder": ("{name} was not saved: uploads/ in this chat's folder is not a real folder (a command may "
                     "have replaced it with a link); remove or rename it, then send the file again.",
                     "{name} 未保存：本聊天文件夹中的 uploads/ 不是真正的文件夹（可能被某个命令换成了链接）；"
                     "请删除或重命名它，然后重新发送文件。"),
    "media_fetch_failed": ("I couldn't download {name} from the platform; please send it again.",
                           "无法从平台下载 {name}，请重新发送。"),
    "voice_disabled": ("Voice messages aren't enabled here (no transcription model is configured); please type it.",
                       "此处未启用语音消息（未配置转写模型），请改用文字。"),
    "voice_failed": ("I couldn't transcribe that voice message; please try again or type it.",
                     "无法转写这条语音消息，请重试或改用文字。"),
    "welcome": ("Hello! I'm your assistant: send me a message to start, or /help for the commands.",
                "你好！我是你的助手：直接发消息开始对话，或发送 /help 查看命令。"),
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
    "not_kept": (
        "Sorry, I could not keep that message (my storage failed for a moment). Please send it again.",
        "抱歉，这条消息没能保存下来（存储暂时出了问题），请再发送一次。",
    ),
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
    "ago_now": ("just now", "刚刚"),
    "ago_minutes": ("{n} min ago", "{n} 分钟前"),
    "ago_hours": ("{n} h ago", "{n} 小时前"),
    "ago_days": ("{n} d ago", "{n} 天前"),
    "not_found": ("No conversation {id!r} in this chat.", "本聊天中没有会话 {id!r}。"),
    "ambiguous": ("{id!r} matches several conversations: {ids}", "{id!r} 匹配多个会话：{ids}"),
    "switched": ("Switched to conversation `{id}` ({title}).", "已切换到会话 `{id}`（{title}）。"),
    "unarchived_on_switch": ("It was archived; it is back in /list now.", "它原已归档，现已回到 /list 中。"),
    "list_all_title": ("All conversations", "全部会话"),
    "archived_mark": ("📦 archived", "📦 已归档"),
    "archived_button": ("📦 Archived ({n})", "📦 已归档（{n}）"),
    "archive_button": ("📦 Archive", "📦 归档"),
    "unarchive_button": ("Unarchive {id}", "取消归档 {id}"),
    "delete_button": ("🗑 Delete", "🗑 删除"),
    "undo_button": ("↩ Undo", "↩ 撤销"),
    "rename_done": ("Renamed this conversation to “{title}”.", "已将当前会话重命名为「{title}」。"),
    "rename_too_long": ("A title can be at most {max} characters (this one has {n}); please shorten it.",
                        "标题最多 {max} 个字符（当前 {n} 个），请缩短。"),
    "deleted": ("Deleted conversation `{id}` ({title}). Send /undo within {minutes} minutes to bring it back.",
                "已删除会话 `{id}`（{title}）。{minutes} 分钟内发送 /undo 可恢复。"),
    "moved_to": ("You are now in conversation `{id}` ({title}).", "你现在位于会话 `{id}`（{title}）。"),
    "undone": ("Restored conversation `{id}` ({title}); you are in it now.",
               "已恢复会话 `{id}`（{title}），并已切换到它。"),
    "undo_nothing": ("Nothing to undo: no conversation was deleted here in the last {minutes} minutes.",
                     "没有可撤销的操作：最近 {minutes} 分钟内这里没有删除会话。"),
    "archived": ("Archived conversation `{id}` ({title}): hidden from /list, shown by /list all. Switching to it "
                 "or /unarchive {id} brings it back.",
                 "已归档会话 `{id}`（{title}）：/list 中不再显示，/list all 可见。"
                 "切换到它或发送 /unarchive {id} 即可恢复。"),
    "unarchived": ("Conversation `{id}` ({title}) is back in /list.", "会话 `{id}`（{title}）已回到 /list 中。"),
    "not_archived": ("Conversation `{id}` ({title}) is not archived.", "会话 `{id}`（{title}）未归档。"),
    "search_title": ("Search: {query}", "搜索：{query}"),
    "search_none": ("Nothing in this chat's conversations contains “{query}”.",
                    "本聊天的会话中没有包含「{query}」的内容。"),
    "search_line": ("· `{id}` {title}{mark}: {snippet}", "· `{id}` {title}{mark}：{snippet}"),
    "tree_title": ("Conversation {id}", "会话 {id}"),
    "goto_done": ("Moved to [{n}] {preview}. Your next message branches from here.",
                  "已切换到 [{n}] {preview}。下一条消息将从这里分叉。"),
    "goto_missing": ("There is no message [{n}] — see /tree.", "没有序号为 [{n}] 的消息——请查看 /tree。"),
    "retry_nothing": ("There is no message of yours to answer again.", "没有可以重新回答的消息。"),
    "retry_button": ("↻ Retry", "↻ 重试"),
    "stopped": ("Stopped. {dropped} queued message(s) dropped.", "已停止。丢弃了 {dropped} 条排队消息。"),
    "nothing_to_stop": ("Nothing is running.", "当前没有正在运行的任务。"),
    "interrupted": ("(interrupted)", "（已中断）"),
    "status": (
        "Conversation `{id}` ({title})\nModel: {model}\nMessages: {count}\nCursor: [{cursor}] (see /tree)\n"
        "Role: {role}",
        "会话 `{id}`（{title}）\n模型：{model}\n消息数：{count}\n光标：[{cursor}]（见 /tree）\n角色：{role}",
    ),
    "status_summarized": ("Summarized: the oldest {covered} of the {total} messages on this branch",
                          "已总结：此分支 {total} 条消息中最早的 {covered} 条"),
    "compact_done": ("Summarized the oldest {covered} messages of this branch; {recent} recent ones stay as they are.",
                     "已总结此分支最早的 {covered} 条消息；最近的 {recent} 条保持原样。"),
    "compact_nothing": ("Nothing to summarize yet: this branch is still short.", "暂无可总结的内容：此分支还很短。"),
    "compact_failed": ("The model could not write the summary right now; nothing changed. Try again later.",
                       "模型暂时无法生成总结；未做任何更改。请稍后再试。"),
    "skills_title": ("Skills", "技能"),
    "tools_title": ("Tools", "工具"),
    "tools_none": ("No tools are available here.", "此处没有可用的工具。"),
    "tools_asks": ("asks for approval", "需要批准"),
    "tools_mcp_server": ("MCP server {server}: {state}", "MCP 服务器 {server}：{state}"),
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
    "think_current": ("Thinking mode is {state} here. /think on or /think off changes it.",
                      "本聊天的思考模式：{state}。发送 /think on 或 /think off 更改。"),
    "think_set": ("Thinking mode is now {state} in this chat.", "本聊天的思考模式现在{state}。"),
    "think_on": ("on (the model's reasoning is shown folded before its answer)",
                 "已开启（模型的推理过程折叠显示在回答之前）"),
    "think_off": ("off", "已关闭"),
    "model_set": ("This chat now uses {model}.", "本聊天现在使用 {model}。"),
    "not_allowed": ("Sorry, this bot is not open to you here.", "抱歉，此机器人未对你开放。"),
    "console_open_elsewhere": (
        "The chat '{chat}' is already open in another console on this database; its answers show there. "
        "Close that one first, or open another chat (BOTHUB_CONSOLE_CHAT=<name>).",
        "聊天“{chat}”已在连接同一数据库的另一个控制台中打开，回复会显示在那里。"
        "请先关闭那个控制台，或打开另一个聊天（BOTHUB_CONSOLE_CHAT=<名称>）。"),
    "pairing": (
        "This bot needs an admin's approval first. Your pairing code is {code} (valid for 1 hour): "
        "ask an admin to send /pair approve {code}.",
        "使用前需要管理员批准。你的配对码是 {code}（1 小时内有效）：请管理员发送 /pair approve {code}。",
    ),
    "voice_unavailable": ("Voice answers are not set up here (the operator sets llm.speech_model).",
                          "此处未启用语音回答（需由运维设置 llm.speech_model）。"),
    "voice_current": ("Voice answers: {mode}.", "语音回答：{mode}。"),
    "voice_set": ("Voice answers are now {mode}.", "语音回答已设为 {mode}。"),
    "voice_mode_on": ("on, for every answer", "开启（每条回答）"),
    "voice_mode_auto": ("auto, when you send a voice message", "自动（你发语音时）"),
    "voice_mode_off": ("off", "关闭"),
    "speech_failed": ("(The voice version of this answer could not be made; the text above is complete.)",
                     "（未能生成这条回答的语音版本；上面的文字是完整的。）"),
    "voice_code": ("(a code block, shown in the text)", "（一段代码，见文字消息）"),
    "pair_approved": ("Approved: user {user} can now talk to me.", "已批准：用户 {user} 现在可以和我对话了。"),
    "pair_unknown": ("No pending pairing with code {code} (codes expire after an hour).",
                     "没有配对码为 {code} 的待批准请求（配对码 1 小时后过期）。"),
    "budget_reached": ("Sorry, {which} has not enough left for this request ({used} of {limit} used). It resets "
                       "at {reset} UTC.",
                       "抱歉，{which}剩余不足以完成此请求（已用 {used} / {limit}）。将于 {reset}（UTC）重置。"),
    "budget_warning": ("Note: {percent}% of {which} is used ({used} of {limit}). It resets at {reset} UTC.",
                       "提示：{which}已用 {percent}%（{used} / {limit}）。将于 {reset}（UTC）重置。"),
    "budget_chat_day": ("this chat's daily budget", "本聊天的每日预算"),
    "budget_chat_month": ("this chat's monthly budget", "本聊天的每月预算"),
    "budget_user_day": ("your daily budget", "你的每日预算"),
    "budget_user_month": ("your monthly budget", "你的每月预算"),
    "budget_agent_day": ("the bot's daily budget", "机器人的每日预算"),
    "budget_agent_month": ("the bot's monthly budget", "机器人的每月预算"),
    "usage_title": ("Usage", "用量"),
    "usage_line": ("{who}: today {day_tokens} tokens, cost {day_cost}; this month {month_tokens} tokens, cost "
                   "{month_cost}", "{who}：今天 {day_tokens} tokens，费用 {day_cost}；本月 {month_tokens} tokens，"
                   "费用 {month_cost}"),
    "usage_you": ("You", "你"),
    "usage_chat": ("This chat", "本聊天"),
    "usage_everyone": ("Everyone", "所有人"),
    "usage_top": ("Top users this month:", "本月用量最多的用户："),
    "usage_off": ("Usage is not recorded here.", "这里不记录用量。"),
    "admins_only": ("Only admins can do that here.", "只有管理员可以在这里这样做。"),
    "tree_models": ("[{n}] was written by {models}", "[{n}] 的作者模型：{models}"),
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
    "doctor_llm_ok": ("LLM at {where}: reachable in {ms} ms, model {model}",
                      "LLM（{where}）：可连接（{ms} 毫秒），模型 {model}"),
    "doctor_no_platform": ("no platform configured: `bothub run` opens the console chat",
                           "未配置任何平台：`bothub run` 会打开控制台聊天"),
    "doctor_dashboard_off": ("dashboard: off (server.dashboard)", "控制台网页：已关闭（server.dashboard）"),
    "doctor_dashboard_env": ("dashboard: sign-in with the password in BOTHUB_ADMIN_PASSWORD",
                             "控制台网页：使用 BOTHUB_ADMIN_PASSWORD 中的密码登录"),
    "doctor_dashboard_stored": ("dashboard: sign-in with the password set by `bothub set-password` (scrypt hash)",
                                "控制台网页：使用 `bothub set-password` 设置的密码登录（scrypt 哈希）"),
    "doctor_dashboard_link": ("dashboard: no password set; each start prints a one-time sign-in link "
                              "(`bothub set-password` sets one)",
                              "控制台网页：未设置密码；每次启动会打印一次性登录链接"
                              "（可用 `bothub set-password` 设置密码）"),
    "approvals_none": ("No standing approvals in this chat: every command asks.",
                       "本聊天没有长期批准：每条命令都会询问。"),
    "approvals_head": ("Standing approvals (each allows exactly this text, nothing longer; "
                       "/approvals revoke <n> removes one):",
                       "长期批准（每条只允许完全相同的文本，不会放宽；/approvals revoke <编号> 撤销）："),
    "approvals_rule": ("#{id} {kind}, {where}: `{command}`", "#{id} {kind}，{where}：`{command}`"),
    "approvals_conv": ("one conversation", "单个对话"),
    "approvals_chat": ("whole chat", "整个聊天"),
    "approvals_revoked": ("Revoked standing approval #{id}: it will ask again.",
                          "已撤销长期批准 #{id}：之后会再次询问。"),
    "approvals_unknown": ("There is no standing approval #{id} in this chat.", "本聊天没有长期批准 #{id}。"),
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

STRINGS.update(FLEET_STRINGS)
STRINGS.update(CLI_STRINGS)  # the CLI's and doctor's words, and --help's, kept in files of their own
STRINGS.update(HELP_STRINGS)
STRINGS.update(TREE_STRINGS)  # the tree features' words: /merge, /handoff, /forget_me, /duel, /replay
STRINGS.update(TASK_STRINGS)  # background tasks' words
CHAT_KEYS = frozenset(STRINGS)  # what the chats and the CLI say; the web's words must not shadow any (a test checks)
STRINGS.update(WEB_STRINGS)  # the dashboard's and web chat's words, kept in a file of their own, in this one table


def t(lang: str, key: str, **values: object) -> str:
    en, zh = STRINGS[key]
    template = zh if lang == "zh" else en
    return template.format(**values) if values else template
