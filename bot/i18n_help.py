"""`bothub --help` and each command's help (en, zh); bot/i18n.py merges them into its one table."""

from __future__ import annotations

HELP_STRINGS: dict[str, tuple[str, str]] = {
    "help_bothub": ("One LLM agent in your chats. Without a command: `run`.",
                    "一个在你的聊天软件里工作的 LLM 智能体。不带命令时等同于 `run`。"),
    "help_epilog": ("A .env file in the working directory is read first; variables already set in the environment "
                    "win. BOTHUB_LANGUAGE=zh shows this help in Chinese.",
                    "先读取工作目录中的 .env 文件；环境中已设置的变量优先。BOTHUB_LANGUAGE=en 以英文显示帮助。"),
    "help_config": ("YAML config file (default: ./bothub.yaml or $BOTHUB_CONFIG)",
                    "YAML 配置文件（默认：./bothub.yaml 或 $BOTHUB_CONFIG）"),
    "help_data_dir": ("where the database, chat folders and workspace live (default: ./data or $BOTHUB_DATA_DIR)",
                      "数据库、聊天文件夹和工作区所在的位置（默认：./data 或 $BOTHUB_DATA_DIR）"),
    "help_port": ("the web server's port: dashboard, web chat, webhooks (default: 8080 or $BOTHUB_PORT; 0: any "
                  "free port)",
                  "Web 服务器端口：管理面板、网页聊天、webhook（默认：8080 或 $BOTHUB_PORT；0 表示任一空闲端口）"),
    "help_host": ("the address it listens on (default: 127.0.0.1 or $BOTHUB_HOST)",
                  "监听的地址（默认：127.0.0.1 或 $BOTHUB_HOST）"),
    "help_run": ("start the hub: every configured platform, or the console and web chat when none is",
                 "启动服务：所有已配置的平台；未配置平台时打开控制台和网页聊天"),
    "help_chat": ("chat in this terminal; piped stdin is a script, one message or command per line",
                  "在此终端中聊天；通过管道输入时视为脚本，每行一条消息或命令"),
    "help_chat_name": ("local chat name; each keeps its own history (default: local)",
                       "本地聊天名称；每个名称保留各自的历史（默认：local）"),
    "help_init": ("create a workspace with the default files (never overwrites yours)",
                  "用默认文件创建工作区（不会覆盖你的文件）"),
    "help_init_path": ("workspace folder (default: <data dir>/workspace)",
                       "工作区文件夹（默认：<数据目录>/workspace）"),
    "help_onboard": ("first-run wizard: pick the model endpoint, prove it with one answer, write .env and "
                     "bothub.yaml, add platform tokens (needs a terminal)",
                     "首次运行向导：选择模型端点，用一次真实回答验证，写入 .env 和 bothub.yaml，"
                     "添加平台令牌（需要终端）"),
    "help_doctor": ("check workspace, config, port, proxy, LLM endpoint and platform credentials",
                    "检查工作区、配置、端口、代理、LLM 端点和平台凭据"),
    "help_chats": ("list the chats in the database with their keys and conversation counts",
                   "列出数据库中的聊天及其键和会话数"),
    "help_export": ("print a conversation as JSONL (seed 000 format)", "以 JSONL（seed 000 格式）输出一个会话"),
    "help_export_id": ("conversation id as /list shows it (a unique prefix is enough)",
                       "/list 显示的会话 id（唯一前缀即可）"),
    "help_export_chat": ("the chat that owns it, as `bothub chats` shows it (default: {default})",
                         "它所属的聊天，即 `bothub chats` 显示的键（默认：{default}）"),
    "help_import": ("import a JSONL conversation into a chat and make it the active one",
                    "把 JSONL 会话导入某个聊天，并设为当前会话"),
    "help_import_file": ("a file written by `bothub export`", "由 `bothub export` 写出的文件"),
    "help_import_chat": ("the chat to import into (default: {default})", "导入到哪个聊天（默认：{default}）"),
    "help_migrate": ("copy a SQLite store into an empty PostgreSQL database and check the counts",
                     "把 SQLite 存储复制到空的 PostgreSQL 数据库并核对数量"),
    "help_migrate_from": ("sqlite:///path (default: this config's database)", "sqlite:///路径（默认：本配置的数据库）"),
    "help_token": ("create, list or revoke HTTP API tokens (a new token is printed once, then only its digest is "
                   "kept)",
                   "创建、列出或吊销 HTTP API 令牌（新令牌只显示一次，之后只保存其摘要）"),
    "help_token_action": ("what to do", "要做什么"),
    "help_token_value": ("create: a name for the system that will use it; revoke: the token's id",
                         "create：使用它的系统的名称；revoke：令牌的 id"),
    "help_set_password": ("set the dashboard's admin password (kept as a scrypt hash in the data dir)",
                          "设置管理面板的管理员密码（在数据目录中只保存其 scrypt 哈希）"),
    "help_service": ("as root: install the systemd unit, /etc/bothub (config, env file), /var/lib/bothub and the "
                     "bothub user, with permissions that work",
                     "以 root 运行：安装 systemd 单元、/etc/bothub（配置、环境文件）、/var/lib/bothub 和 bothub "
                     "用户，并设置可用的权限"),
    "help_service_root": ("write under DIR instead of / (a staging root for an image)",
                          "写到 DIR 下而不是 /（用于制作镜像的暂存根目录）"),
    "help_pair": ("approve a DM pairing code (dm_policy: pairing)", "批准私聊配对码（dm_policy: pairing）"),
    "help_pair_action": ("what to do with the code", "如何处理这个配对码"),
    "help_pair_code": ("the code the bot gave the person", "机器人发给对方的配对码"),
    "help_pair_platform": ("where the person wrote from", "对方来自哪个平台"),
}
