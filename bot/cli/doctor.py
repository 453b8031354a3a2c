"""`bothub doctor`: a checklist of everything that must be right before the bot can answer.

It judges the workspace exactly as start-up does (`prepare_workspace` + `check_workspace`), so a green
doctor means `bothub chat` starts, and it speaks the configured language.
"""

from __future__ import annotations

from collections.abc import Mapping

from bot.adapter import find_spec
from bot.agent.approvals import Approvals
from bot.agent.provider import LLMError, Provider
from bot.agent.skills import SkillSet
from bot.agent.tools import sandbox
from bot.agent.tools.mcp import McpTools
from bot.agent.tools.registry import ToolRegistry
from bot.agent.workspace import check_workspace, missing_required
from bot.config import Config, shell_admins_problem
from bot.i18n import t
from bot.web.login import stored_password_hash

OK, FAIL, WARN, INFO = "✔", "✘", "!", "·"


async def run(cfg: Config, env: Mapping[str, str]) -> int:
    """Prints one line per check; exit code 1 if anything would stop the bot."""
    lang = cfg.language
    results = _workspace(cfg, lang)
    results.append(await _check_llm(cfg, lang))
    platforms = cfg.enabled_platforms
    if not platforms:
        results.append((INFO, t(lang, "doctor_no_platform")))
    for name in platforms:
        spec = find_spec(name)
        if spec is None or spec.doctor is None:
            results.append((INFO, f"{name}: enabled (no credential check available)"))
            continue
        try:
            detail = await spec.doctor(cfg.sections[name], env)
            results.append((OK, f"{name}: {detail}"))
        except Exception as e:
            results.append((FAIL, f"{name}: {e}"))
    results.extend(_check_shell(cfg))
    results.append(dashboard_check(cfg, env))
    results += await _check_mcp(cfg, env)
    for mark, line in results:
        print(f"{mark} {line}")
    return 1 if any(mark == FAIL for mark, _ in results) else 0


def _check_shell(cfg: Config) -> list[tuple[str, str]]:
    if not cfg.tools.shell_enabled:
        return [(INFO, "shell: off (tools.shell_enabled)")]
    checks = []
    if why := sandbox.problem():
        checks.append((FAIL, f"shell: disabled until the sandbox works: {why}"))
    else:
        checks.append((OK, "shell: bubblewrap sandbox works"))
    if problem := shell_admins_problem(cfg, cfg.enabled_platforms):
        checks.append((FAIL, f"shell: {problem}"))
    return checks


def dashboard_check(cfg: Config, env: Mapping[str, str]) -> tuple[str, str]:
    """The same choice as start-up: the environment's password, else the stored hash, else a sign-in link."""
    if not cfg.server.dashboard:
        return INFO, t(cfg.language, "doctor_dashboard_off")
    if env.get("BOTHUB_ADMIN_PASSWORD"):
        return OK, t(cfg.language, "doctor_dashboard_env")
    if stored_password_hash(cfg.data_dir):
        return OK, t(cfg.language, "doctor_dashboard_stored")
    return INFO, t(cfg.language, "doctor_dashboard_link")


def _workspace(cfg: Config, lang: str) -> list[tuple[str, str]]:
    path = cfg.workspace_dir
    if not path.exists():
        return [(INFO, t(lang, "doctor_workspace_new", path=path))]
    results = [(INFO, t(lang, "doctor_restores", name=name)) for name in missing_required(path)]
    problems = check_workspace(path)
    results += [(FAIL, t(lang, "doctor_workspace_problem", problem=p)) for p in problems]
    if not problems:
        results.insert(0, (OK, t(lang, "doctor_workspace_ok", path=path)))
    results += [(WARN, f"skills/{s.path.name if s.path else s.name}: {s.status_line()}")
                for s in SkillSet.load(path / "skills").broken()]
    return results


async def _check_mcp(cfg: Config, env: Mapping[str, str]) -> list[tuple[str, str]]:
    """Start each MCP server once and list its tools, or say why it does not start."""
    if not cfg.mcp.servers:
        return []
    mcp = McpTools(cfg.mcp.servers, env, cfg.data_dir / "logs" / "mcp", Approvals())
    registry = ToolRegistry()
    try:
        await mcp.refresh(registry)
    finally:
        await mcp.stop()
    results = []
    for name, conn in mcp.connections.items():
        if conn.tools is None:
            results.append((FAIL, f"MCP server {name}: {conn.error}"))
        else:
            names = mcp.tool_names(name)
            results.append((OK, f"MCP server {name}: {len(names)} tools: {', '.join(names) or '(none allowed)'}"))
    return results


async def _check_llm(cfg: Config, lang: str) -> tuple[str, str]:
    if not (cfg.llm.api_key or cfg.llm.base_url):
        return FAIL, t(lang, "doctor_llm_missing")
    provider = Provider(cfg.llm.base_url, cfg.llm.api_key, timeout=10, max_retries=0)
    where = cfg.llm.base_url or "OpenAI"
    try:
        listed = await provider.get_json("/models")
    except LLMError as e:
        if e.kind == "auth":
            return FAIL, t(lang, "doctor_llm_refused", where=where)
        return FAIL, t(lang, "doctor_llm_unreachable", where=where, error=e.kind)
    finally:
        await provider.close()
    data = listed.get("data") if isinstance(listed, dict) else None
    models = [m["id"] for m in data or () if isinstance(m, dict) and isinstance(m.get("id"), str)]
    if models and cfg.llm.chat_model not in models:
        return FAIL, t(lang, "doctor_llm_no_model", where=where, model=cfg.llm.chat_model,
                       models=", ".join(models[:8]))
    return OK, t(lang, "doctor_llm_ok", where=where, model=cfg.llm.chat_model)
