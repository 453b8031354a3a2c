"""`bothub onboard`: the first-run wizard. It asks for the model endpoint, proves it with one real answer
(through doctor's check and the hub's own model client), then writes `.env` (secrets, 0600) and `bothub.yaml`.

It needs a person at a terminal: piped stdin is refused with one line, since unattended set-up is already
`cp .env.example .env` and editing it. Nothing is written before the endpoint answered, and an existing file is
replaced only after a yes.
"""

from __future__ import annotations

import locale
import os
import sys
from collections.abc import Callable, Collection, Mapping
from pathlib import Path

import yaml
from dotenv import set_key
from prompt_toolkit import prompt

from bot.adapter import installed_specs
from bot.agent.llm import LLMClient
from bot.agent.provider import LLMError
from bot.cli import doctor
from bot.config import Config
from bot.i18n import STRINGS, t
from bot.llmconfig import LLMConfig
from bot.ops import eventloop

ENV_FILE, CONFIG_FILE = Path(".env"), Path("bothub.yaml")
# (label or its i18n key, default URL, default model, whether a key is needed)
ENDPOINTS = (("OpenAI", "", "gpt-4o-mini", True), ("Ollama", "http://localhost:11434/v1", "", False),
             ("vLLM", "http://localhost:8000/v1", "", False), ("onboard_other", "", "", True))
Ask = Callable[..., str]


def run(from_env_file: Collection[str] = ()) -> int:
    """`from_env_file`: the variables the old .env set, which the new one replaces. Exit code 0 when the files
    were written (or the chat ran), 1 when the user stopped, 2 without a terminal."""
    if not (sys.stdin.isatty() and sys.stdout.isatty()):
        print(t(_language(os.environ), "onboard_no_terminal"), file=sys.stderr)
        return 2
    try:
        return _wizard(prompt, from_env_file)
    except (EOFError, KeyboardInterrupt):
        print(t(_language(os.environ), "onboard_stopped"))
        return 1


def _language(env: Mapping[str, str]) -> str:
    """BOTHUB_LANGUAGE, else the system locale; zh for any Chinese locale."""
    chosen = env.get("BOTHUB_LANGUAGE") or env.get("LC_ALL") or env.get("LC_MESSAGES") or env.get("LANG") or ""
    chosen = chosen or (locale.getlocale()[0] or "")
    return "zh" if chosen.lower().startswith("zh") else "en"


def _wizard(ask: Ask, from_env_file: Collection[str]) -> int:
    lang = _language(os.environ)
    print(t(lang, "onboard_welcome"))
    existing = [str(p) for p in (ENV_FILE, CONFIG_FILE) if p.exists()]
    if existing and not _yes(ask, t(lang, "onboard_replace", files=", ".join(existing)), default=False):
        print(t(lang, "onboard_kept"))
        return 1
    values = _endpoint(ask, lang)
    values.update(_platforms(ask, lang))
    _write(values, lang)
    if _yes(ask, t(lang, "onboard_start_now"), default=True):
        stale = set(values) | set(from_env_file)  # the new .env wins over the old one
        env = {name: value for name, value in os.environ.items() if name not in stale}
        os.execve(sys.executable, [sys.executable, "-m", "bot", "chat"], env)
    print(t(lang, "onboard_start_later"))
    return 0


def _yes(ask: Ask, question: str, default: bool) -> bool:
    answer = ask(f"{question} [{'Y/n' if default else 'y/N'}] ").strip().lower()
    return default if not answer else answer in ("y", "yes", "是", "好")


def _endpoint(ask: Ask, lang: str) -> dict[str, str]:
    """Asks until an endpoint answers a real turn; returns its variables for .env."""
    for number, (label, *_rest) in enumerate(ENDPOINTS, 1):
        print(f"  {number}. {t(lang, label) if label in STRINGS else label}")
    while True:
        choice = ask(t(lang, "onboard_pick") + " [1] ").strip() or "1"
        if choice not in {str(n) for n in range(1, len(ENDPOINTS) + 1)}:
            continue
        _label, url, model, needs_key = ENDPOINTS[int(choice) - 1]
        url = ask(t(lang, "onboard_url") + " ", default=url).strip() if choice != "1" else ""
        model = ask(t(lang, "onboard_model") + " ", default=model).strip()
        key = ask(t(lang, "onboard_key" if needs_key else "onboard_key_optional") + " ", is_password=True).strip()
        if (needs_key and not key) or not model or (choice != "1" and not url):
            print(t(lang, "onboard_missing"))
            continue
        print(t(lang, "onboard_checking"))
        problem = eventloop.run(verify(LLMConfig(base_url=url or None, api_key=key or None, chat_model=model,
                                                 timeout=15, max_retries=0), lang))
        if problem is None:
            print(t(lang, "onboard_answered"))
            values = {"OPENAI_BASE_URL": url, "OPENAI_API_KEY": key, "BOTHUB_MODEL": model}
            return {name: value for name, value in values.items() if value}
        print(problem)
        print(t(lang, "onboard_again"))


async def verify(llm: LLMConfig, lang: str) -> str | None:
    """None when the endpoint took the key, offers the model and answered one tiny turn; else why not."""
    cfg = Config.model_validate({"language": lang})
    cfg.llm = llm
    env = dict(os.environ)  # the proxy variables, as the hub would use them
    for mark, line in await doctor.check_llm(cfg, env):
        if mark == doctor.FAIL:
            return f"{doctor.FAIL} {line}"
    client = LLMClient(llm, env=env)
    try:
        await client.complete([{"role": "user", "content": "Reply with the word OK."}], llm.chat_model)
    except LLMError as e:
        return f"{doctor.FAIL} {t(lang, 'onboard_turn_failed', error=e.kind)}"
    finally:
        await client.close()
    return None


def _platforms(ask: Ask, lang: str) -> dict[str, str]:
    """Each installed platform that needs credentials: its console steps, then its variables (Enter skips)."""
    values: dict[str, str] = {}
    for spec in installed_specs():
        if not spec.required_env:
            continue
        if steps := spec.first_steps[1 if lang == "zh" else 0]:
            print(steps)
        given: dict[str, str] = {}
        for name in spec.required_env:
            if not (value := ask(t(lang, "onboard_platform_var", name=name) + " ", is_password=True).strip()):
                given = {}  # one skipped variable skips the platform: half its credentials would only fail later
                break
            given[name] = value
        values.update(given)
    return values


def _write(values: Mapping[str, str], lang: str) -> None:
    """`.env` with the secrets (mode 0600, python-dotenv quoting), `bothub.yaml` with the web server on."""
    ENV_FILE.unlink(missing_ok=True)
    os.close(os.open(ENV_FILE, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600))
    for name, value in values.items():
        set_key(ENV_FILE, name, value, quote_mode="always")
    ENV_FILE.chmod(0o600)
    settings = {"language": lang, "server": {"enabled": True}}
    CONFIG_FILE.write_text(t(lang, "onboard_yaml_header") + "\n" + yaml.safe_dump(settings, allow_unicode=True),
                           encoding="utf-8")
    print(t(lang, "onboard_wrote", files=f"{ENV_FILE} (0600), {CONFIG_FILE}"))
