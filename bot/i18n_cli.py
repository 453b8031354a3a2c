"""The command line's and `bothub doctor`'s own lines (en, zh); bot/i18n.py merges them into its one table."""

from __future__ import annotations

CLI_STRINGS: dict[str, tuple[str, str]] = {
    "cli_port_busy": (
        "the web server cannot listen on {host}:{port} ({why}): start with --port N (or set BOTHUB_PORT=N; "
        "0 picks a free one), or stop what uses it",
        "Web 服务器无法监听 {host}:{port}（{why}）：用 --port N 启动（或设置 BOTHUB_PORT=N；0 表示任选空闲端口），"
        "或停止占用它的程序",
    ),
    "cli_port_busy_console": ("bothub: {line}. The console chat starts without the dashboard and web chat.",
                              "bothub：{line}。控制台聊天照常启动，但没有管理面板和网页聊天。"),
    "cli_port_range": ("--port must be from 0 to 65535, not {port}", "--port 必须在 0 到 65535 之间，而不是 {port}"),
    "cli_sign_in_link": ("dashboard: no admin password is set; sign in once with {link} (or run `bothub set-password`)",
                         "管理面板：未设置管理员密码；请用一次性链接登录 {link}（或运行 `bothub set-password`）"),
    "cli_nothing_to_serve": (
        "nothing to serve: no platform is configured, there is no terminal for the console chat, and the web "
        "server is off (server.enabled). Set a platform's token, or turn the web server on for the web chat.",
        "没有可提供的服务：未配置任何平台，没有供控制台聊天使用的终端，Web 服务器也已关闭（server.enabled）。"
        "请设置某个平台的令牌，或打开 Web 服务器以使用网页聊天。",
    ),
    "cli_schema_newer": (
        "bothub: the database's schema is version {found}, newer than this bothub knows ({known}): a newer release "
        "migrated it. Upgrade this replica to that release; it does not start against a schema it cannot read.",
        "bothub：数据库的结构版本是 {found}，比这个 bothub 认识的版本（{known}）更新：它已被更新的版本迁移过。"
        "请把这个副本升级到那个版本；它不会在读不懂的数据库结构上启动。",
    ),
    "cli_answers_failed": ("bothub: {count} answer(s) failed", "bothub：{count} 个回答失败"),
    "cli_dashboard_at": ("dashboard: open {base}/", "管理面板：打开 {base}/"),
    "cli_dashboard_chat_at": ("dashboard: open {base}/, web chat at {base}/webchat",
                              "管理面板：打开 {base}/，网页聊天在 {base}/webchat"),
    "cli_headless_web": (
        "no platform is configured and there is no terminal: serving the web chat at {base}/webchat until "
        "stopped (SIGTERM)",
        "未配置平台且没有终端：在 {base}/webchat 提供网页聊天，直到被停止（SIGTERM）",
    ),
    "cli_headless_health": (
        "no platform is configured and there is no terminal: serving {base}/healthz and webhooks until stopped "
        "(SIGTERM)",
        "未配置平台且没有终端：提供 {base}/healthz 和 webhook，直到被停止（SIGTERM）",
    ),
    "cli_env_unknown": ("{name} is set, but bothub reads no variable of that name",
                        "设置了 {name}，但 bothub 不读取这个名字的变量"),
    "cli_env_unknown_meant": ("{name} is set, but bothub reads no variable of that name — did you mean {meant}?",
                              "设置了 {name}，但 bothub 不读取这个名字的变量——你是想设置 {meant} 吗？"),
    "doctor_server_off": ("web server: off (server.enabled: false), so no dashboard, web chat or webhooks",
                          "Web 服务器：已关闭（server.enabled: false），因此没有管理面板、网页聊天和 webhook"),
    "doctor_port_free": ("web server: {host}:{port} is free for `bothub run`",
                         "Web 服务器：{host}:{port} 空闲，可供 `bothub run` 使用"),
    "doctor_any_port": ("any free port", "任一空闲端口"),
    "doctor_proxy_none": ("network: direct connections (no HTTPS_PROXY, HTTP_PROXY, ALL_PROXY or network.proxy)",
                          "网络：直接连接（未设置 HTTPS_PROXY、HTTP_PROXY、ALL_PROXY 或 network.proxy）"),
    "doctor_proxy": ("network: outbound connections go through the proxy {proxy} (the checks below too)",
                     "网络：对外连接经由代理 {proxy}（以下检查也是）"),
    "doctor_via_proxy": ("{where} via the proxy {proxy}", "{where}（经由代理 {proxy}）"),
    "doctor_platform_unchecked": ("{name}: enabled (no credential check available)", "{name}：已启用（无法检查凭据）"),
    "doctor_shell_off": ("shell: off (tools.shell_enabled)", "shell：已关闭（tools.shell_enabled）"),
    "doctor_shell_broken": ("shell: disabled until the sandbox works: {why}", "shell：沙箱可用之前保持禁用：{why}"),
    "doctor_shell_ok": ("shell: bubblewrap sandbox works", "shell：bubblewrap 沙箱可用"),
    "doctor_shell_limits": (
        "shell: limits {cpu} s CPU, {memory} MB memory and {files} MB files per process, {timeout} s per command",
        "shell：限制为每个进程 {cpu} 秒 CPU、{memory} MB 内存、{files} MB 文件，每条命令 {timeout} 秒"),
    "doctor_shell_cgroup": (
        "shell: cgroup mode v{version}: {memory} MB and {processes} processes for a command's whole tree ({where})",
        "shell：cgroup 模式 v{version}：每条命令的整个进程树共 {memory} MB 内存、{processes} 个进程（{where}）"),
    "doctor_shell_no_cgroup": ("shell: cgroup mode none: memory and process limits apply per process only ({why})",
                               "shell：cgroup 模式 none：内存和进程数限制只对单个进程生效（{why}）"),
    "doctor_shell_net_off": ("shell: network mode none: commands have no network (tools.shell_network: false)",
                             "shell：网络模式 none：命令没有网络（tools.shell_network: false）"),
    "doctor_shell_net_proxy": (
        "shell: network mode proxy: public internet only, through the egress proxy (HTTP CONNECT and http:// URLs, "
        "names resolved and vetted as for web_fetch); loopback, private and metadata addresses refused",
        "shell：网络模式 proxy：只能访问公网，经由出口代理（HTTP CONNECT 与 http:// 地址，"
        "域名解析与检查同 web_fetch）；本机回环、私有地址和云元数据地址一律拒绝"),
    "doctor_shell_net_broken": ("shell: network mode proxy cannot be set up here, so the shell is not offered: {why}",
                                "shell：此处无法建立网络模式 proxy，因此不提供 shell：{why}"),
    "doctor_mcp_failed": ("MCP server {name}: {error}", "MCP 服务器 {name}：{error}"),
    "doctor_mcp_ok": ("MCP server {name}: {count} tools: {tools}", "MCP 服务器 {name}：{count} 个工具：{tools}"),
    "doctor_mcp_none_allowed": ("(none allowed)", "（均未允许）"),
    "cli_forget_user_form": ("--user takes platform:id: the platform's name, a colon, the user's id there",
                             "--user 的格式为 平台:ID：平台名称、冒号、该平台上的用户 ID"),
    "cli_forgotten": ("erased {target}:\n{receipt}", "已删除 {target}：\n{receipt}"),
    "doctor_browser_missing": ("browse: cannot start: {what}", "browse：无法启动：{what}"),
    "doctor_browser_ok": ("browse: Chromium in bubblewrap, no network of its own (requests through the SSRF guard), "
                          "{memory} MB, {timeout:g} s per call, admins only",
                          "browse：Chromium 运行于 bubblewrap 中，自身无网络（请求经 SSRF 防护），{memory} MB，"
                          "每次调用 {timeout:g} 秒，仅限管理员"),
    "doctor_search_ok": ("web_search: {detail} answers", "web_search：{detail} 可以搜索"),
    "doctor_search_failed": ("web_search: {detail}", "web_search：{detail}"),
    "service_not_root": ("install-service must run as root (it creates a user and writes /etc)",
                         "install-service 必须以 root 运行（它会创建用户并写入 /etc）"),
    "service_unreachable": (
        "the bothub user could not reach {path}: {blocked} is closed to other users or hidden from services "
        "(ProtectHome). Put the checkout where services can read it, e.g. /opt/bothub, and run make run there once",
        "bothub 用户无法访问 {path}：{blocked} 对其他用户关闭，或对服务不可见（ProtectHome）。请把代码放在服务"
        "可读的位置，例如 /opt/bothub，并在那里运行一次 make run",
    ),
    "service_wrote": ("wrote {path}", "已写入 {path}"),
    "service_next": (
        "next: put the secrets into /etc/bothub/bothub.env (at least OPENAI_API_KEY and a platform token), then\n"
        "  systemctl daemon-reload && systemctl enable --now bothub\n  journalctl -u bothub -f   # the log",
        "下一步：把密钥写入 /etc/bothub/bothub.env（至少 OPENAI_API_KEY 和一个平台令牌），然后\n"
        "  systemctl daemon-reload && systemctl enable --now bothub\n  journalctl -u bothub -f   # 查看日志",
    ),
    "cli_init_created": ("workspace {path}: created {files}", "工作区 {path}：已创建 {files}"),
    "cli_init_nothing": ("workspace {path}: created nothing (all files exist)",
                         "工作区 {path}：无需创建（文件均已存在）"),
    "cli_no_database": ("bothub: no database at {path} yet (wrong --data-dir? it is created on first start)",
                        "bothub：{path} 还没有数据库（--data-dir 写错了？它在首次启动时创建）"),
    "cli_import_failed": ("bothub: cannot import {file}: {error}", "bothub：无法导入 {file}：{error}"),
    "cli_imported": ("imported {count} messages as conversation {id} in chat {chat}; it is now the chat's active "
                     "conversation",
                     "已导入 {count} 条消息，成为聊天 {chat} 中的会话 {id}；它现在是该聊天的当前会话"),
    "cli_no_pairing": ("bothub: no pending {platform} pairing with code {code} (codes expire after an hour)",
                       "bothub：没有待处理的 {platform} 配对码 {code}（配对码一小时后过期）"),
    "cli_paired": ("approved {platform} user {user}", "已批准 {platform} 用户 {user}"),
    "cli_no_chats": ("no chats yet", "还没有聊天"),
    "onboard_no_terminal": (
        "bothub onboard asks questions and needs a terminal; unattended, run `cp .env.example .env` and set "
        "OPENAI_API_KEY (or OPENAI_BASE_URL) and BOTHUB_MODEL there",
        "bothub onboard 需要在终端中回答问题；无人值守时请运行 `cp .env.example .env`，并在其中设置 "
        "OPENAI_API_KEY（或 OPENAI_BASE_URL）和 BOTHUB_MODEL",
    ),
    "onboard_stopped": ("stopped: nothing was written", "已停止：没有写入任何文件"),
    "onboard_welcome": ("bothub set-up: the model first, then platforms (Enter skips). Ctrl-C stops; nothing is "
                        "written until the model has answered.",
                        "bothub 设置：先配置模型，再配置平台（回车跳过）。Ctrl-C 停止；模型回答之前不会写入任何文件。"),
    "onboard_replace": ("{files} already exist(s). Replace?", "{files} 已存在。要替换吗？"),
    "onboard_kept": ("kept the existing files; nothing was written", "保留现有文件；没有写入任何内容"),
    "onboard_pick": ("Which model endpoint?", "使用哪个模型端点？"),
    "onboard_other": ("any OpenAI-compatible URL", "任意兼容 OpenAI 的 URL"),
    "onboard_url": ("Base URL (ending in /v1):", "基础 URL（以 /v1 结尾）："),
    "onboard_model": ("Model name:", "模型名称："),
    "onboard_key": ("API key (hidden):", "API 密钥（不显示）："),
    "onboard_key_optional": ("API key (hidden; Enter if the server needs none):",
                             "API 密钥（不显示；服务器不需要时直接回车）："),
    "onboard_missing": ("the URL, the model and (for this endpoint) the key are all needed; once more",
                        "需要 URL、模型以及（对该端点而言）密钥；请再来一次"),
    "onboard_checking": ("asking the model for one short answer…", "正在请模型回答一句话……"),
    "onboard_answered": ("✔ the model answered", "✔ 模型已回答"),
    "onboard_turn_failed": ("the model did not answer a test message ({error})", "模型没有回答测试消息（{error}）"),
    "onboard_again": ("nothing was written; let's try again", "没有写入任何内容；请重试"),
    "onboard_platform_var": ("{name} (hidden; Enter skips):", "{name}（不显示；回车跳过）："),
    "onboard_yaml_header": ("# written by `bothub onboard`; the secrets are in .env",
                            "# 由 `bothub onboard` 写入；密钥在 .env 中"),
    "onboard_wrote": ("wrote {files}", "已写入 {files}"),
    "onboard_start_now": ("Start the chat now?", "现在开始聊天吗？"),
    "onboard_start_later": ("start it with: bothub chat (or make run; bothub doctor checks everything)",
                            "启动方式：bothub chat（或 make run；bothub doctor 检查全部设置）"),
    "cli_replay_header": ("conversation  answer  changed   lines  tokens (then → now)",
                          "会话          回答    是否改变  行数   令牌（原 → 现）"),
    "cli_replay_changed": ("changed", "已改变"),
    "cli_replay_same": ("same", "相同"),
    "cli_replay_summary": ("changed: {changed}, unchanged: {unchanged}", "已改变：{changed}，未改变：{unchanged}"),
    "cli_replay_bad_date": ("bothub: --since takes a day as YYYY-MM-DD, not {value!r}",
                            "bothub：--since 需要 YYYY-MM-DD 格式的日期，而不是 {value!r}"),
    "cli_skills_entry": ("{name} {version} from {source} (sha256 {digest}…)",
                         "{name} {version}，来自 {source}（sha256 {digest}…）"),
    "cli_skills_none": ("no skill packages installed", "没有安装任何技能包"),
    "cli_skills_needs_source": ("say which package: a folder, a git URL, a zip file (or a name to uninstall)",
                                "请指明技能包：文件夹、git 地址、zip 文件（卸载时给出名称）"),
    "cli_skills_not_installed": ("no skill package {name!r} is installed", "未安装名为 {name!r} 的技能包"),
    "cli_skills_removed": ("uninstalled {name}", "已卸载 {name}"),
    "cli_skills_bad": ("cannot install: {error}", "无法安装：{error}"),
    "cli_skills_already": ("{name} is installed already: use `bothub skills update`",
                           "{name} 已安装：请用 `bothub skills update`"),
    "cli_skills_package": ("package {name} {version} (sha256 {digest}…): {description}\nfiles:",
                           "技能包 {name} {version}（sha256 {digest}…）：{description}\n文件："),
    "cli_skills_tools": ("tools it asks for: {tools}", "它要求的工具：{tools}"),
    "cli_skills_same": ("no change against the installed version", "与已安装的版本相比没有变化"),
    "cli_skills_shell": ("refused: the package asks for {tools}; an admin must allow that with --allow-shell",
                         "已拒绝：该技能包要求 {tools}；须由管理员用 --allow-shell 明确允许"),
    "cli_skills_confirm": ("install it? [y/N] ", "安装它吗？[y/N] "),
    "cli_skills_cancelled": ("nothing installed", "未安装任何内容"),
    "cli_skills_installed": ("installed {name}, pinned at sha256 {digest}…; it is used from the next start or "
                             "/skills reload",
                             "已安装 {name}，固定于 sha256 {digest}…；下次启动或 /skills reload 后生效"),
}
