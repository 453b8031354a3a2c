"""The words of the tree's features — /merge, /handoff and /resume, /forget_me, /duel and /vote, /replay — in
English and Chinese.

Part of the one table in bot/i18n.py (`t` looks them up there); kept here so that file stays readable.
"""

from __future__ import annotations

TREE_STRINGS: dict[str, tuple[str, str]] = {
    "forget_off": ("Forgetting is not available here.", "此处不支持删除记录。"),
    "forget_group_admin": ("In a group, what the bot keeps is everyone's: only an admin can erase all of it. "
                           "/forget_me alone erases your own messages here.",
                           "在群组中，机器人保存的记录属于所有人：只有管理员可以全部删除。"
                           "单独发送 /forget_me 可删除你自己在这里的消息。"),
    "forget_ask_own": ("This erases your own part of this group's record: your messages (each stays in the "
                       "conversation as erased), the files you sent, the traces of the answers to you, what the bot "
                       "overheard from you and your usage here. Others' messages and the group's memory stay. It "
                       "cannot be undone.",
                       "这将删除你在本群记录中的部分：你的消息（在会话中标记为已删除）、你发送的文件、回答你的追踪记录、"
                       "机器人旁听到的你的发言以及你在这里的用量。其他人的消息和本群的记忆会保留。此操作无法撤销。"),
    "forget_ask": ("This erases everything this chat holds: every conversation and message, memory, files, traces, "
                   "jobs and usage. It cannot be undone.",
                   "这将删除本聊天的全部记录：所有会话和消息、记忆、文件、追踪、任务和用量。此操作无法撤销。"),
    "forget_ask_group": ("This erases everything this group's chat holds, for everyone in it: every conversation, "
                         "memory, files, traces, jobs and usage. It cannot be undone.",
                         "这将为群内所有人删除本群聊天的全部记录：所有会话、记忆、文件、追踪、任务和用量。此操作无法撤销。"),
    "forget_yes": ("Yes, erase everything", "是的，全部删除"),
    "forget_done": ("Erased. What went:\n{receipt}", "已删除。删除的内容：\n{receipt}"),
    "merge_head": ("↪ Merged from the branch of message #{n}:", "↪ 并入自第 #{n} 条消息所在的分支："),
    "merge_done": ("Merged: {covered} messages of the branch of #{n} summarized into message #{new} here.",
                   "已并入：第 #{n} 条消息所在分支的 {covered} 条消息已总结为此处的第 #{new} 条消息。"),
    "merge_source": ("Go to #{n}", "前往 #{n}"),
    "merge_same_branch": ("Message #{n} is already on this branch: nothing to merge.",
                          "第 #{n} 条消息已在当前分支上：无需并入。"),
    "merge_failed": ("The model could not summarize that branch just now; try /merge again in a moment.",
                     "模型暂时无法总结该分支；请稍后再试 /merge。"),
    "handoff_off": ("Hand-offs are not available here.", "此处不支持转交会话。"),
    "link_code": ("Link code: **{code}** — send `/resume {code}` within {minutes} minutes in your direct chat with "
                  "me on another platform (or with another of my bots): that chat then shares this one's history — "
                  "the same conversations, memory and files. /unlink there undoes it.",
                  "关联代码：**{code}** —— 请在 {minutes} 分钟内，在你与我在其他平台（或我的另一个机器人）的私聊中发送 "
                  "`/resume {code}`：那个聊天将共享本聊天的历史——同样的会话、记忆和文件。在那里发送 /unlink 可取消。"),
    "link_done": ("Linked: this chat now shares your history from {where} — the same conversations, memory and "
                  "files; each answer comes back where you asked. /unlink gives this chat its own history back.",
                  "已关联：本聊天现在共享你在 {where} 的历史——同样的会话、记忆和文件；回答总在你提问的地方。"
                  "/unlink 可让本聊天恢复自己的历史。"),
    "link_dm_only": ("Only direct chats can share a history: a group's history is everyone's in it.",
                     "只有私聊可以共享历史：群组的历史属于群内所有人。"),
    "link_already": ("This chat already shares that history.", "本聊天已经共享该历史。"),
    "unlink_done": ("Unlinked: this chat has its own history again; the shared one stays with {where}.",
                    "已取消关联：本聊天恢复了自己的历史；共享的历史保留在 {where}。"),
    "unlink_none": ("This chat shares no other chat's history: nothing to unlink.",
                    "本聊天没有共享其他聊天的历史：无需取消关联。"),
    "handoff_code": ("Hand-off code: **{code}** — send `/resume {code}` in the other chat (any platform, a group, "
                     "the web chat) within {minutes} minutes. It works once; this chat keeps its copy.",
                     "转交代码：**{code}** —— 请在 {minutes} 分钟内于另一个聊天（任意平台、群组或网页聊天）发送 "
                     "`/resume {code}`。代码只能使用一次；本聊天保留副本。"),
    "handoff_code_move": ("Hand-off code: **{code}** — send `/resume {code}` in the other chat within {minutes} "
                          "minutes. It works once; once resumed there, this conversation is archived here.",
                          "转交代码：**{code}** —— 请在 {minutes} 分钟内于另一个聊天发送 `/resume {code}`。"
                          "代码只能使用一次；在那里继续后，本聊天中的该会话将被归档。"),
    "handoff_copied": ("Continued here: «{title}» (messages: {messages}, files: {files}). /tree shows where you are.",
                       "已在此继续：«{title}»（{messages} 条消息，{files} 个文件）。/tree 可查看当前位置。"),
    "handoff_moved": ("Moved here: «{title}» (messages: {messages}, files: {files}); it is archived where it came "
                      "from. /tree shows where you are.",
                      "已移到此处：«{title}»（{messages} 条消息，{files} 个文件）；原聊天中的该会话已归档。"
                      "/tree 可查看当前位置。"),
    "handoff_unknown": ("That code is unknown, already used or expired; ask for a new one with /handoff.",
                        "该代码无效、已被使用或已过期；请用 /handoff 获取新代码。"),
    "resume_unknown": ("No job or live hand-off code {id} here: a code works once and for 10 minutes (ask for a "
                       "new one with /handoff); /jobs lists this chat's jobs.",
                       "这里没有任务或有效的转交代码 {id}：代码只能使用一次且 10 分钟内有效"
                       "（可用 /handoff 获取新代码）；/jobs 列出本聊天的任务。"),
    "handoff_someone_else": ("That code was made by someone else; only they can resume it.",
                             "该代码由其他人创建，只有创建者本人可以使用。"),
    "handoff_group_admin": ("A group takes a conversation only from one of its admins: ask an admin to send /resume.",
                            "群组只能由管理员接收转交的会话：请让管理员发送 /resume。"),
    "handoff_same_chat": ("That conversation is already in this chat: /list shows it.",
                          "该会话已在本聊天中：/list 可以看到。"),
    "handoff_gone": ("That conversation was deleted before it could be resumed.", "该会话在继续之前已被删除。"),
    "duel_start": ("⚔ Duel on your last message: {models}. Tools are off during a duel. Vote for the better answer; "
                   "until then you continue from the first.",
                   "⚔ 对决你的上一条消息：{models}。对决期间不使用工具。请投票选出更好的回答；"
                   "在此之前从第一个回答继续。"),
    "duel_title": ("Answer {i} · {model}", "回答 {i} · {model}"),
    "duel_vote": ("👍 {i} is better (#{n})", "👍 {i} 更好（#{n}）"),
    "duel_failed": ("{model} could not answer this time.", "{model} 这次未能回答。"),
    "duel_usage": ("Name two or more models or agents: /duel <model> <agent> … (allowed: {allowed}).",
                   "请指定两个或更多模型或智能体：/duel <模型> <智能体> …（可用：{allowed}）。"),
    "duel_too_many": ("A duel takes at most {n} contenders.", "一场对决最多 {n} 个参赛者。"),
    "vote_not_duel": ("Message #{n} is not an answer of a duel in this chat.",
                      "第 #{n} 条消息不是本聊天中某场对决的回答。"),
    "vote_done": ("🏆 #{n} ({model}) chosen: you continue from here.", "🏆 已选择 #{n}（{model}）：从这里继续。"),
    "feedback_gone": ("Thanks! That answer is no longer in the conversation tree, so your rating could not be kept.",
                      "谢谢！该回答已不在会话树中，因此无法保存你的评价。"),
    "replay_head": ("↻ Replay of #{n} · {model}", "↻ 重放 #{n} · {model}"),
    "replay_new": ("replay", "重放"),
    "replay_same": ("The replay of #{n} gave the same answer.", "#{n} 的重放给出了相同的回答。"),
    "replay_changed": ("The replay of #{n} changed {lines} line(s):", "#{n} 的重放改变了 {lines} 行："),
    "replay_model": ("model", "模型"),
    "replay_tokens": ("tokens", "令牌"),
    "replay_cost": ("cost", "费用"),
    "replay_time": ("time", "耗时"),
    "replay_failed": ("The replay did not get an answer from the model.", "重放没有得到模型的回答。"),
    "replay_not_answer": ("#{n} is not an answer to replay (see /tree).", "#{n} 不是可以重放的回答（见 /tree）。"),
    "replay_missed": ("{n} tool call(s) had no recorded result in the tree (tools were not called; "
                      "`/replay N tools` calls them).",
                      "{n} 个工具调用在树中没有记录的结果（未调用工具；`/replay N tools` 会调用工具）。"),
}
