"""Typed configuration: YAML file for settings, environment variables for secrets and endpoints."""

from __future__ import annotations

import difflib
import os
from collections.abc import Mapping, MutableMapping, Sequence
from pathlib import Path
from typing import Any, Literal, get_args
from urllib.parse import urlsplit

import yaml
from pydantic import BaseModel, Field, IPvAnyNetwork, ValidationError, model_validator
from pydantic_core import ErrorDetails, InitErrorDetails

from bot.adapter import PlatformConfig, find_spec, installed_specs
from bot.llmconfig import BudgetsConfig, LLMConfig
from bot.llmconfig import Section as _Section
from bot.toolconfig import McpConfig, ToolsConfig

LANGUAGES: dict[str, Literal["en", "zh"]] = {"en": "en", "zh": "zh"}  # what BOTHUB_LANGUAGE may say


class ConfigError(Exception):
    """A configuration problem, worded for the person running the bot."""


class ServerConfig(_Section):
    """The hub's own aiohttp server: webhooks, health endpoints and the dashboard."""

    host: str = "127.0.0.1"
    port: int = Field(default=8080, ge=0, le=65535)  # 0: any free port (tests)
    enabled: bool | None = None  # None: on for `bothub run`, off for `bothub chat` and embedded uses
    dashboard: bool = True  # the web dashboard and web chat: a password, or the sign-in link printed at start
    # seconds for a request head, and the idle keep-alive limit: above the 15 s common HTTP clients keep an idle
    # connection, so none of them reuses one the server is just closing
    header_timeout: float = Field(default=20.0, gt=0)
    body_timeout: float = Field(default=120.0, gt=0)  # seconds for a request body once its head is in
    # above a webhook sender's own parallelism (up to 100 at the busiest platform) and a load balancer's pool
    max_connections_per_address: int = Field(default=256, gt=0)
    # reverse proxies whose X-Forwarded-For / X-Forwarded-Proto are believed (addresses or networks)
    trusted_proxies: list[IPvAnyNetwork] = Field(default_factory=list)


class NetworkConfig(_Section):
    """Outbound connections: the model, the platforms' SDKs and web_fetch. Unset, the environment's
    HTTPS_PROXY / HTTP_PROXY / ALL_PROXY / NO_PROXY (either case) decide, as for curl."""

    proxy: str | None = Field(default=None, repr=False)  # http://[user:pass@]host:port for every outbound client
    no_proxy: list[str] = Field(default_factory=list)  # hosts (and their subdomains) reached directly

    def apply(self, env: MutableMapping[str, str]) -> None:
        """The setting becomes the variables every client reads (it wins over the environment's)."""
        if self.proxy:
            for name in PROXY_VARS:
                env.pop(name.lower(), None)
                env[name] = self.proxy
        if self.no_proxy:
            current = env.pop("no_proxy", None) or env.get("NO_PROXY")
            env["NO_PROXY"] = ",".join([*([current] if current else []), *self.no_proxy])


PROXY_VARS = ("HTTPS_PROXY", "HTTP_PROXY", "ALL_PROXY")


def proxy_for(url: str, env: Mapping[str, str]) -> str | None:
    """The proxy a connection to `url` (http, https, ws, wss) goes through, or None for a direct one."""
    parts = urlsplit(url)
    scheme = {"ws": "http", "wss": "https"}.get(parts.scheme, parts.scheme)

    def var(name: str) -> str:
        return env.get(name) or env.get(name.upper()) or ""

    proxy = var(f"{scheme}_proxy") or var("all_proxy")
    if not proxy or not parts.hostname:
        return None
    if _bypassed(parts.hostname, parts.port, var("no_proxy")):
        return None
    return proxy if "://" in proxy else f"http://{proxy}"


def _bypassed(host: str, port: int | None, no_proxy: str) -> bool:
    """NO_PROXY as curl reads it: `*`, or names (with their subdomains, a leading dot optional), `name:port`."""
    for entry in (e.strip().lower() for e in no_proxy.split(",")):
        name, _, only_port = entry.rpartition(":") if entry.count(":") == 1 else (entry, "", "")
        name = name.lstrip(".").strip("[]")
        if entry == "*" or (name and (host == name or host.endswith("." + name))
                            and (not only_port or only_port == str(port))):
            return True
    return False


class MediaConfig(_Section):
    """Files that come with messages (bot/media) and files the agent sends."""

    max_bytes: int = Field(default=20_000_000, ge=1)  # per file
    max_image_px: int = Field(default=2048, ge=64)  # long edge of an image after resizing
    max_files: int = Field(default=10, ge=1)  # per message


class DatabaseConfig(_Section):
    """Where the store lives: SQLite in data_dir by default, or PostgreSQL for several replicas."""

    url: str | None = Field(default=None, repr=False)  # env BOTHUB_DATABASE_URL; may hold a password
    pool_size: int = Field(default=10, ge=1)  # PostgreSQL connections per process


class SchedulerConfig(_Section):
    """Reminders and recurring jobs (bot/scheduler)."""

    enabled: bool = True
    timezone: str = "UTC"  # for chats that never ran /tz
    catch_up: float = 3600.0  # seconds: a due time older than this when seen (e.g. after downtime) is missed
    poll: float = 30.0  # seconds between looks for jobs another replica added
    max_jobs_per_chat: int = 50


class TracesConfig(_Section):
    """Run traces (model, tokens, timings, tool calls) shown in the dashboard; bounded per chat and by age."""

    per_chat: int = Field(default=200, ge=1)  # newest traces each chat keeps
    keep_days: float = Field(default=14.0, gt=0)  # older ones are pruned hourly
    otlp_endpoint: str | None = None  # e.g. http://127.0.0.1:4318/v1/traces: runs exported as OpenTelemetry spans


class HeartbeatConfig(_Section):
    interval: float = Field(default=1800.0, ge=60.0)  # seconds between checklist runs in opted-in chats


class GroupContextConfig(_Section):
    """Un-addressed group messages kept per chat or thread, shown to the model when someone addresses it.

    Off for one platform with `<platform>.group_context: false`; `messages: 0` turns it off everywhere."""

    messages: int = Field(default=30, ge=0, le=500)  # the newest this many per chat or thread
    max_age: float = Field(default=7200.0, gt=0)  # seconds; older ones are never shown and are deleted
    max_chars: int = Field(default=500, ge=20, le=4000)  # per message; longer text is cut with "…"


class FleetConfig(_Section):
    """Agents, identities and bindings stored in the database (README "Agents and bots")."""

    poll: float = Field(default=1.0, gt=0)  # seconds between looks for changes another process made


class Config(_Section):
    data_dir: Path = Path("data")  # env BOTHUB_DATA_DIR
    workspace: Path | None = None  # defaults to <data_dir>/workspace, seeded from the bundled one
    language: Literal["en", "zh"] = "en"
    log_level: str = "INFO"
    max_queue: int = Field(default=20, ge=1)  # messages waiting per session before "busy"
    shutdown_grace: float = Field(default=8.0, ge=0)
    max_tasks: int = Field(default=3, ge=1)  # background tasks (sub-agents) running at once per chat
    llm: LLMConfig = Field(default_factory=LLMConfig)
    tools: ToolsConfig = Field(default_factory=ToolsConfig)
    media: MediaConfig = Field(default_factory=MediaConfig)
    group_context: GroupContextConfig = Field(default_factory=GroupContextConfig)
    scheduler: SchedulerConfig = Field(default_factory=SchedulerConfig)
    heartbeat: HeartbeatConfig = Field(default_factory=HeartbeatConfig)
    mcp: McpConfig = Field(default_factory=McpConfig)
    server: ServerConfig = Field(default_factory=ServerConfig)
    network: NetworkConfig = Field(default_factory=NetworkConfig)
    platforms: list[str] | None = None  # adapters to run; unset: each one whose required secrets are set
    sections: dict[str, PlatformConfig] = Field(default_factory=dict)  # adapter name → its own section
    database: DatabaseConfig = Field(default_factory=DatabaseConfig)
    traces: TracesConfig = Field(default_factory=TracesConfig)
    budgets: BudgetsConfig = Field(default_factory=BudgetsConfig)
    fleet: FleetConfig = Field(default_factory=FleetConfig)
    replica_id: str | None = None  # env BOTHUB_REPLICA_ID; default <hostname>-<pid> (PostgreSQL replicas)

    @model_validator(mode="before")
    @classmethod
    def _adapter_sections(cls, data: Any) -> Any:
        """A top-level key naming an installed adapter is that adapter's section, checked by its model."""
        if not isinstance(data, dict):
            return data
        data, sections = dict(data), dict(data.get("sections") or {})
        for key in [k for k in data if k not in cls.model_fields and isinstance(k, str)]:
            spec = find_spec(key)
            if spec is None:
                continue  # left in place: reported as an unknown key
            try:
                sections[key] = spec.config_model.model_validate(data.pop(key) or {})
            except ValidationError as e:
                errors = [_under(key, err) for err in e.errors()]
                raise ValidationError.from_exception_data(cls.__name__, errors) from None
        data["sections"] = sections
        return data

    @property
    def workspace_dir(self) -> Path:
        return self.workspace or self.data_dir / "workspace"

    @property
    def enabled_platforms(self) -> list[str]:
        return [name for name, section in self.sections.items() if section.enabled]

    @property
    def database_url(self) -> str:
        return self.database.url or f"sqlite:///{self.data_dir / 'bothub.sqlite3'}"


def shell_admins_problem(cfg: Config, platforms: list[str]) -> str | None:
    """Only admins may approve shell commands: with shell on, every platform that runs must name some."""
    if not cfg.tools.shell_enabled:
        return None
    missing = [name for name in platforms
               if (access := cfg.sections[name].access) is not None and not access.admins]
    if not missing:
        return None
    return (f"tools.shell_enabled is on, but {', '.join(missing)} has no admins, so nobody could approve a "
            f"shell command: set {missing[0]}.access.admins to the user ids allowed to approve them, "
            "or turn tools.shell_enabled off")


def _under(key: str, error: ErrorDetails) -> InitErrorDetails:
    """An adapter section's validation error, located under the section's key."""
    details: InitErrorDetails = {"type": error["type"], "loc": (key, *error["loc"]), "input": error["input"]}
    if "ctx" in error:
        details["ctx"] = error["ctx"]
    return details


def load_config(path: Path | None = None, env: dict[str, str] | None = None) -> Config:
    """Read YAML (if any), then apply environment overrides. Secrets are only ever read from env."""
    env = dict(os.environ) if env is None else env
    raw: dict[str, Any] = {}
    path = path or (Path(env["BOTHUB_CONFIG"]) if env.get("BOTHUB_CONFIG") else None)
    if path is None and Path("bothub.yaml").exists():
        path = Path("bothub.yaml")
    if path is not None:
        try:
            raw = yaml.safe_load(path.read_text(encoding="utf-8")) or {}
        except FileNotFoundError as e:
            raise ConfigError(f"config file not found: {path}") from e
        except yaml.YAMLError as e:
            raise ConfigError(f"config file {path} is not valid YAML: {e}") from e
        if not isinstance(raw, dict):
            raise ConfigError(f"config file {path} must hold a mapping at the top level")
    try:
        cfg = Config.model_validate(raw)
    except ValidationError as e:
        where = f" in {path}" if path is not None else ""
        raise ConfigError(f"invalid configuration{where}:\n" + "\n".join(_explain(e))) from e
    _apply_env(cfg, env)
    return cfg


def _explain(error: ValidationError) -> list[str]:
    """One line per problem; a misspelt key gets the closest known key as a suggestion."""
    lines = []
    for err in error.errors():
        loc = err["loc"]
        line = f"  {'.'.join(str(p) for p in loc)}: {err['msg']}"
        if err["type"] == "extra_forbidden":
            line = f"  {'.'.join(str(p) for p in loc)}: unknown setting"
            close = difflib.get_close_matches(str(loc[-1]), _known_keys(loc[:-1]), n=1, cutoff=0.6)
            line += f" — did you mean {close[0]!r}?" if close else ""
        lines.append(line)
    return lines


def _known_keys(loc: Sequence[Any]) -> list[str]:
    """The setting names allowed at a place in the YAML tree (`("llm",)` → LLMConfig's fields)."""
    if not loc:
        return [name for name in Config.model_fields if name != "sections"] + [s.name for s in installed_specs()]
    spec = find_spec(str(loc[0]))
    model: type[BaseModel] = spec.config_model if spec is not None else Config
    for part in loc[1:] if spec is not None else loc:
        field = model.model_fields.get(str(part))
        kinds = (field.annotation, *get_args(field.annotation)) if field is not None else ()
        inner = next((k for k in kinds if isinstance(k, type) and issubclass(k, BaseModel)), None)
        if inner is None:
            return []
        model = inner
    return list(model.model_fields)


def _apply_env(cfg: Config, env: dict[str, str]) -> None:
    if env.get("BOTHUB_DATA_DIR"):
        cfg.data_dir = Path(env["BOTHUB_DATA_DIR"])
    if env.get("BOTHUB_WORKSPACE"):
        cfg.workspace = Path(env["BOTHUB_WORKSPACE"])
    cfg.database.url = env.get("BOTHUB_DATABASE_URL") or cfg.database.url
    if cfg.database.url and not cfg.database.url.startswith(("sqlite:///", "postgresql://", "postgres://")):
        raise ConfigError("database.url (or BOTHUB_DATABASE_URL) must start with sqlite:/// or postgresql://")
    cfg.replica_id = env.get("BOTHUB_REPLICA_ID") or cfg.replica_id
    cfg.server.host = env.get("BOTHUB_HOST") or cfg.server.host
    if port := env.get("BOTHUB_PORT"):
        if not port.isdigit() or int(port) > 65535:
            raise ConfigError(f"BOTHUB_PORT must be a port number from 0 to 65535, not {port!r}")
        cfg.server.port = int(port)
    cfg.log_level = env.get("BOTHUB_LOG_LEVEL") or cfg.log_level
    language = env.get("BOTHUB_LANGUAGE")
    if language in LANGUAGES:
        cfg.language = LANGUAGES[language]
    cfg.llm.api_key = env.get("OPENAI_API_KEY") or None
    cfg.llm.base_url = env.get("OPENAI_BASE_URL") or cfg.llm.base_url
    cfg.llm.chat_model = env.get("BOTHUB_MODEL") or cfg.llm.chat_model
    _provider_keys(cfg.llm, env)
    _enable_platforms(cfg, env)


def _provider_keys(llm: LLMConfig, env: dict[str, str]) -> None:
    """Each provider's keys from the env vars it names; every chain link must name a known provider."""
    for name, provider in llm.providers.items():
        if provider.api_keys:
            raise ConfigError(f"llm.providers.{name}: keys are read from env vars only: name them in api_key_env")
        missing = [var for var in provider.key_envs if not env.get(var)]
        if missing:
            raise ConfigError(f"llm.providers.{name}.api_key_env: {', '.join(missing)} is not set")
        provider.api_keys = [env[var] for var in provider.key_envs]
    known = {"default", *llm.providers}
    for chain, links in llm.chains.items():
        for link in links:
            if link.provider not in known:
                raise ConfigError(f"llm.chains.{chain}: no provider named {link.provider!r} "
                                  f"(known: {', '.join(sorted(known))})")
    if "default" in llm.chains and "chat_model" not in llm.model_fields_set and not env.get("BOTHUB_MODEL"):
        llm.chat_model = llm.chains["default"][0].model


def _enable_platforms(cfg: Config, env: dict[str, str]) -> None:
    """Every installed adapter gets a section; `platforms:` decides which run, else their secrets do."""
    if cfg.platforms is not None:
        unknown = [name for name in cfg.platforms if find_spec(name) is None]
        if unknown:
            installed = ", ".join(spec.name for spec in installed_specs())
            raise ConfigError(f"platforms: no adapter named {', '.join(unknown)} (installed: {installed})")
    for spec in installed_specs():
        section = cfg.sections.setdefault(spec.name, spec.config_model())
        if cfg.platforms is not None:
            section.enabled = spec.name in cfg.platforms
        elif section.enabled is None:
            section.enabled = bool(spec.required_env) and all(env.get(name) for name in spec.required_env)


def llm_setup_hint() -> str:
    return (
        "No LLM endpoint is configured. Set OPENAI_API_KEY for OpenAI, or OPENAI_BASE_URL for any\n"
        "OpenAI-compatible server, e.g. OPENAI_BASE_URL=http://localhost:11434/v1 for Ollama or\n"
        "http://localhost:8000/v1 for vLLM (OPENAI_API_KEY may then be any placeholder), and\n"
        "BOTHUB_MODEL to the model name."
    )
