"""The words of background tasks — their progress line, the posted result, /task, /tasks and /cancel t<n> — in
English and Chinese.

Part of the one table in bot/i18n.py (`t` looks them up there); kept here so that file stays readable.
"""

from __future__ import annotations

TASK_STRINGS: dict[str, tuple[str, str]] = {
    "task_running": ("⏳ Task {id} · {prompt} · working…", "⏳ 任务 {id} · {prompt} · 进行中…"),
    "task_step": ("⏳ Task {id} · {prompt} · step {steps}: {tool} · {seconds} s",
                  "⏳ 任务 {id} · {prompt} · 第 {steps} 步：{tool} · {seconds} 秒"),
    "task_done": ("✅ Task {id} · {prompt} · done in {seconds} s ({steps} steps)",
                  "✅ 任务 {id} · {prompt} · 已完成，用时 {seconds} 秒（{steps} 步）"),
    "task_failed": ("❌ Task {id} · {prompt} · failed after {seconds} s",
                    "❌ 任务 {id} · {prompt} · {seconds} 秒后失败"),
    "task_cancelled": ("🛑 Task {id} · {prompt} · cancelled", "🛑 任务 {id} · {prompt} · 已取消"),
    "task_no_answer": ("The sub-agent gave no answer.", "子智能体没有给出回答。"),
    "task_model_failed": ("The model failed ({reason}; error id {error_id}).",
                          "模型调用失败（{reason}；错误编号 {error_id}）。"),
    "task_deadline": ("It ran out of time before it had an answer.", "在得到回答之前已超时。"),
    "task_result": ("**Task {id}** · {prompt}\n\n{result}", "**任务 {id}** · {prompt}\n\n{result}"),
    "task_result_failed": ("**Task {id}** · {prompt} · failed: {result}", "**任务 {id}** · {prompt} · 失败：{result}"),
    "task_elsewhere": ("(Kept in the conversation that started it, “{title}”: /switch {conv})",
                       "（已保存在发起它的会话「{title}」中：/switch {conv}）"),
    "tasks_off": ("Background tasks are not available here.", "此处不支持后台任务。"),
    "tasks_too_many": ("This chat already has {n} background tasks running, the most it may. Wait for one, or stop "
                       "one with /cancel.",
                       "本聊天已有 {n} 个后台任务在运行，已达上限。请等待其中一个完成，或用 /cancel 停止一个。"),
    "tasks_none": ("No background tasks in this chat yet. Start one with /task <prompt>.",
                   "本聊天还没有后台任务。用 /task <提示> 启动一个。"),
    "tasks_head": ("Background tasks (newest first):", "后台任务（最新的在前）："),
    "tasks_line": ("`{id}` · {state} · {prompt} · {minutes} min ago", "`{id}` · {state} · {prompt} · {minutes} 分钟前"),
    "tasks_state_running": ("running", "运行中"),
    "tasks_state_done": ("done", "已完成"),
    "tasks_state_failed": ("failed", "失败"),
    "tasks_state_cancelled": ("cancelled", "已取消"),
    "tasks_cancel_button": ("Cancel {id}", "取消 {id}"),
    "task_not_found": ("There is no task `{id}` in this chat.", "本聊天没有任务 `{id}`。"),
    "task_ended_already": ("Task `{id}` has already ended ({state}).", "任务 `{id}` 已经结束（{state}）。"),
    "task_cancelled_reply": ("Task `{id}` cancelled.", "任务 `{id}` 已取消。"),
}
