"""`bothub doctor`: a checklist of everything that must be right before the bot can answer."""

from __future__ import annotations

from collections.abc import Mapping

import openai

from bot.adapter import find_spec
from bot.agent.workspace import check_workspace
from bot.config import Config

OK, FAIL, INFO = "✔", "✘", "·"


async def run(cfg: Config, env: Mapping[str, str]) -> int:
    """Prints one line per check; exit code 1 if anything failed."""
    results: list[tuple[str, str]] = []
    if not cfg.workspace_dir.exists():
        results.append((INFO, f"workspace {cfg.workspace_dir} does not exist yet (created on first start, "
                              "or run `bothub init`)"))
    elif problems := check_workspace(cfg.workspace_dir):
        results.append((FAIL, "workspace: " + "; ".join(problems)))
    else:
        results.append((OK, f"workspace {cfg.workspace_dir}"))
    results.append(await _check_llm(cfg))
    platforms = cfg.enabled_platforms
    if not platforms:
        results.append((INFO, "no platform configured: `bothub run` opens the console chat"))
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
    for mark, line in results:
        print(f"{mark} {line}")
    return 1 if any(mark == FAIL for mark, _ in results) else 0


async def _check_llm(cfg: Config) -> tuple[str, str]:
    if not (cfg.llm.api_key or cfg.llm.base_url):
        return FAIL, "LLM: set OPENAI_API_KEY (OpenAI) or OPENAI_BASE_URL (a local OpenAI-compatible server)"
    client = openai.AsyncOpenAI(api_key=cfg.llm.api_key or "not-needed", base_url=cfg.llm.base_url,
                                timeout=10, max_retries=0)
    where = cfg.llm.base_url or "OpenAI"
    try:
        models = [m.id async for m in client.models.list()]
    except openai.AuthenticationError:
        return FAIL, f"LLM at {where}: the API key was refused"
    except openai.APIError as e:
        return FAIL, f"LLM at {where}: not reachable ({type(e).__name__})"
    finally:
        await client.close()
    if models and cfg.llm.chat_model not in models:
        return FAIL, f"LLM at {where}: model {cfg.llm.chat_model!r} not offered (has: {', '.join(models[:8])})"
    return OK, f"LLM at {where}: reachable, model {cfg.llm.chat_model}"
