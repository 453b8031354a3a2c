"""`bothub doctor`: a checklist of everything that must be right before the bot can answer.

It judges the workspace exactly as start-up does (`prepare_workspace` + `check_workspace`), so a green
doctor means `bothub chat` starts, and it speaks the configured language.
"""

from __future__ import annotations

import importlib.util
import os
import time
from collections.abc import Mapping

from bot.adapter import find_spec
from bot.agent.approvals import Approvals
from bot.agent.chains import DEFAULT, Chains, provider_configs
from bot.agent.events import FailureKind
from bot.agent.llm import endpoint
from bot.agent.provider import DEFAULT_BASE_URL, LLMError
from bot.agent.proxied import shown
from bot.agent.skill_sources import workspace_skills
from bot.agent.tools import cgroups, sandbox, web_search
from bot.agent.tools.browser import launch as browser_launch
from bot.agent.tools.mcp import McpTools
from bot.agent.tools.registry import ToolRegistry
from bot.agent.workspace import check_workspace, missing_required
from bot.cli.serve import port_hint, port_problem
from bot.config import Config, ConfigError, proxy_for, shell_admins_problem
from bot.i18n import t
from bot.llmconfig import ProviderConfig
from bot.web.login import stored_password_hash

OK, FAIL, WARN, INFO = "✔", "✘", "!", "·"


async def run(cfg: Config, env: Mapping[str, str]) -> int:
    """Prints one line per check; exit code 1 if anything would stop the bot."""
    lang = cfg.language
    results = _workspace(cfg, lang)
    results.append(_check_port(cfg))
    results.append(_proxy_line(cfg, env))
    results += await check_llm(cfg, env)
    platforms = cfg.enabled_platforms
    if not platforms:
        results.append((INFO, t(lang, "doctor_no_platform")))
    for name in platforms:
        spec = find_spec(name)
        if spec is None or spec.doctor is None:
            results.append((INFO, t(lang, "doctor_platform_unchecked", name=name)))
            continue
        try:  # through the proxy the environment names, as the adapter connects
            detail = await spec.doctor(cfg.sections[name], env)
            results.append((OK, f"{name}: {detail}"))
        except Exception as e:
            results.append((FAIL, f"{name}: {e}"))
    results.extend(_check_shell(cfg))
    results.append(dashboard_check(cfg, env))
    results += await _check_mcp(cfg, env)
    results += await _check_search(cfg, env)
    results += _check_browser(cfg)
    for mark, line in results:
        print(f"{mark} {line}")
    return 1 if any(mark == FAIL for mark, _ in results) else 0


def _check_port(cfg: Config) -> tuple[str, str]:
    """`bothub run` listens here (unless server.enabled is false): taken now, it would not start."""
    server, lang = cfg.server, cfg.language
    if server.enabled is False:
        return INFO, t(lang, "doctor_server_off")
    if why := port_problem(server.host, server.port):
        return FAIL, port_hint(cfg, why)
    return OK, t(lang, "doctor_port_free", host=server.host, port=server.port or t(lang, "doctor_any_port"))


def _proxy_line(cfg: Config, env: Mapping[str, str]) -> tuple[str, str]:
    """Which proxy outbound connections use; the LLM and platform checks below go through it."""
    model_url = cfg.llm.base_url or DEFAULT_BASE_URL
    if (proxy := proxy_for(model_url, env)) is None:
        return INFO, t(cfg.language, "doctor_proxy_none")
    return INFO, t(cfg.language, "doctor_proxy", proxy=shown(proxy))


def _check_shell(cfg: Config) -> list[tuple[str, str]]:
    lang = cfg.language
    if not cfg.tools.shell_enabled:
        return [(INFO, t(lang, "doctor_shell_off"))]
    checks = []
    if why := sandbox.problem():
        checks.append((FAIL, t(lang, "doctor_shell_broken", why=why)))
    else:
        checks.append((OK, t(lang, "doctor_shell_ok")))
    checks += [*_shell_limits(cfg), _shell_network(cfg)]
    if problem := shell_admins_problem(cfg, cfg.enabled_platforms):
        checks.append((FAIL, f"shell: {problem}"))
    return checks


def _shell_limits(cfg: Config) -> list[tuple[str, str]]:
    """What bounds one approved command: each process, and (the cgroup mode) its whole tree."""
    lang, limits, mb = cfg.language, sandbox.DEFAULT_LIMITS, 2**20
    each = (INFO, t(lang, "doctor_shell_limits", cpu=limits.cpu_seconds, memory=limits.memory_bytes // mb,
                    files=limits.file_bytes // mb, timeout=f"{cfg.tools.shell_timeout:g}"))
    if (found := cgroups.hierarchy()) is None:  # as root that is a FAIL: sandbox.problem() refuses the shell
        return [each, (FAIL if os.geteuid() == 0 else INFO, t(lang, "doctor_shell_no_cgroup", why=cgroups.problem()))]
    return [each, (OK, t(lang, "doctor_shell_cgroup", version=found.version, memory=limits.memory_bytes // mb,
                         processes=limits.processes, where=", ".join(map(str, found.parents))))]


def _shell_network(cfg: Config) -> tuple[str, str]:
    """The network mode: none, or public addresses only through the egress proxy (which must work here)."""
    if not cfg.tools.shell_network:
        return INFO, t(cfg.language, "doctor_shell_net_off")
    if why := sandbox.network_problem():
        return FAIL, t(cfg.language, "doctor_shell_net_broken", why=why)
    return OK, t(cfg.language, "doctor_shell_net_proxy")


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
    results += [(WARN, f"skills/{s.path.name if s.path else s.name}: {s.status_line()}")  # the skill's own words
                for s in workspace_skills(path).broken()]
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
            results.append((FAIL, t(cfg.language, "doctor_mcp_failed", name=name, error=conn.error)))
        else:
            names = mcp.tool_names(name)
            tools = ", ".join(names) or t(cfg.language, "doctor_mcp_none_allowed")
            results.append((OK, t(cfg.language, "doctor_mcp_ok", name=name, count=len(names), tools=tools)))
    return results


async def _check_search(cfg: Config, env: Mapping[str, str]) -> list[tuple[str, str]]:
    """One real search through the configured engine, with its key, through the proxy."""
    if not (backend := cfg.tools.web_search_backend):
        return []
    works, detail = await web_search.probe(backend, cfg.tools.web_search_url, env, lambda url: proxy_for(url, env))
    return [(OK, t(cfg.language, "doctor_search_ok", detail=detail)) if works
            else (FAIL, t(cfg.language, "doctor_search_failed", detail=detail))]


def _check_browser(cfg: Config) -> list[tuple[str, str]]:
    """What the browse tool needs: Playwright, Chromium and a working bubblewrap (it runs Chromium inside)."""
    if not cfg.tools.browser_enabled:
        return []
    missing = [why for why in (None if importlib.util.find_spec("playwright") else "Playwright (pip install -e "
                               "'.[browser]')", None if browser_launch.chromium() else "chromium (apt-get install "
                               "chromium)", sandbox.problem()) if why]
    if missing:
        return [(FAIL, t(cfg.language, "doctor_browser_missing", what="; ".join(missing)))]
    return [(OK, t(cfg.language, "doctor_browser_ok", memory=cfg.tools.browser_memory_mb,
                   timeout=cfg.tools.browser_timeout))]


async def check_llm(cfg: Config, env: Mapping[str, str]) -> list[tuple[str, str]]:
    """Each provider a chain uses: reachable with its key, offering the chains' models, and how fast it answered,
    through the proxy the environment names. (Breaker states belong to a running hub: the dashboard and /metrics
    show them.)"""
    lang = cfg.language
    if not (cfg.llm.api_key or cfg.llm.base_url or cfg.llm.providers):
        return [(FAIL, t(lang, "doctor_llm_missing"))]
    wanted: dict[str, list[str]] = {}
    for link in Chains(cfg.llm).links():
        wanted.setdefault(link.provider, []).append(link.model)
    providers = provider_configs(cfg.llm)
    return [await _check_provider(name, providers[name], models, lang, env) for name, models in wanted.items()]


async def _check_provider(name: str, settings: ProviderConfig, models: list[str], lang: str,
                          env: Mapping[str, str]) -> tuple[str, str]:
    where = settings.base_url or ("OpenAI" if settings.kind == "openai" else settings.kind)
    where = where if name == DEFAULT else f"{name} ({where})"
    try:
        provider = endpoint(settings, timeout=10, max_retries=0, env=env)
    except ConfigError as e:  # a proxy the model client cannot use
        return FAIL, f"LLM {where}: {e}"
    if provider.proxy is not None:
        where = t(lang, "doctor_via_proxy", where=where, proxy=shown(provider.proxy))
    started = time.monotonic()
    try:
        listed = await provider.get_json("/models")
    except LLMError as e:
        if e.kind is FailureKind.AUTH:
            return FAIL, t(lang, "doctor_llm_refused", where=where)
        return FAIL, t(lang, "doctor_llm_unreachable", where=where, error=e.kind)
    finally:
        await provider.close()
    ms = round((time.monotonic() - started) * 1000)
    data = listed.get("data") if isinstance(listed, dict) else None
    offered = [m["id"] for m in data or () if isinstance(m, dict) and isinstance(m.get("id"), str)]
    missing = [model for model in models if offered and model not in offered]
    if missing:
        return FAIL, t(lang, "doctor_llm_no_model", where=where, model=missing[0], models=", ".join(offered[:8]))
    return OK, t(lang, "doctor_llm_ok", where=where, model=", ".join(models), ms=ms)
