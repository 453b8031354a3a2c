"""Typed configuration: YAML file for settings, environment variables for secrets and endpoints."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Literal

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError


class ConfigError(Exception):
    """A configuration problem, worded for the person running the bot."""


class _Section(BaseModel):
    model_config = ConfigDict(extra="forbid")


class LLMConfig(_Section):
    base_url: str | None = None  # env OPENAI_BASE_URL
    api_key: str | None = Field(default=None, repr=False)  # env OPENAI_API_KEY only
    chat_model: str = "gpt-4o-mini"  # env BOTHUB_MODEL
    skill_model: str | None = None  # cheaper model for tool skills; defaults to chat_model
    allowed_models: list[str] = Field(default_factory=list)
    context_tokens: int = 32000
    max_turns: int = 30
    timeout: float = 60.0  # seconds per HTTP phase
    max_retries: int = 2
    run_deadline: float = 900.0  # seconds for one whole agent run; above the 10 minutes a shell approval may wait
    temperature: float | None = None


class AccessConfig(_Section):
    allow_users: list[str] = Field(default_factory=list)
    allow_chats: list[str] = Field(default_factory=list)
    admins: list[str] = Field(default_factory=list)
    dm_policy: Literal["open", "allowlist", "pairing"] = "open"
    group_policy: Literal["open", "allowlist"] = "open"
    group_commands: Literal["anyone", "admins"] = "anyone"


class TelegramConfig(_Section):
    enabled: bool | None = None  # None: on when TELEGRAM_BOT_TOKEN is set
    api_base: str | None = None  # env TELEGRAM_API_BASE
    webhook_url: str | None = None
    webhook_path: str = "/telegram/webhook"
    access: AccessConfig = Field(default_factory=AccessConfig)


class DiscordConfig(_Section):
    enabled: bool | None = None
    api_base: str | None = None  # env DISCORD_API_BASE
    gateway_url: str | None = None  # env DISCORD_GATEWAY_URL
    message_content_intent: bool = False
    sync_commands_on_start: bool = False
    access: AccessConfig = Field(default_factory=AccessConfig)


class FeishuConfig(_Section):
    enabled: bool | None = None
    domain: str | None = None  # env FEISHU_DOMAIN: "feishu", "lark" or a URL
    transport: Literal["websocket", "webhook"] = "websocket"
    webhook_path: str = "/feishu/webhook"
    access: AccessConfig = Field(default_factory=AccessConfig)


class ServerConfig(_Section):
    """The hub's own aiohttp server: webhooks and health endpoints."""

    host: str = "127.0.0.1"
    port: int = 8080
    enabled: bool = False


class ToolsConfig(_Section):
    shell_enabled: bool = False
    shell_timeout: float = 30.0
    web_fetch_enabled: bool = True
    web_allow_hosts: list[str] = Field(default_factory=list)  # exceptions to the SSRF rules, for tests


class Config(_Section):
    data_dir: Path = Path("data")  # env BOTHUB_DATA_DIR
    workspace: Path | None = None  # defaults to <data_dir>/workspace, seeded from the bundled one
    language: Literal["en", "zh"] = "en"
    log_level: str = "INFO"
    max_queue: int = 20  # messages waiting per session before "busy"
    shutdown_grace: float = 8.0
    llm: LLMConfig = Field(default_factory=LLMConfig)
    tools: ToolsConfig = Field(default_factory=ToolsConfig)
    server: ServerConfig = Field(default_factory=ServerConfig)
    telegram: TelegramConfig = Field(default_factory=TelegramConfig)
    discord: DiscordConfig = Field(default_factory=DiscordConfig)
    feishu: FeishuConfig = Field(default_factory=FeishuConfig)

    @property
    def workspace_dir(self) -> Path:
        return self.workspace or self.data_dir / "workspace"


def load_config(path: Path | None = None, env: dict[str, str] | None = None) -> Config:
    """Read YAML (if any), then apply environment overrides. Secrets are only ever read from env."""
    env = dict(os.environ) if env is None else env
    raw: dict = {}
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
        lines = [f"  {'.'.join(str(p) for p in err['loc'])}: {err['msg']}" for err in e.errors()]
        raise ConfigError("invalid configuration:\n" + "\n".join(lines)) from e
    _apply_env(cfg, env)
    return cfg


def _apply_env(cfg: Config, env: dict[str, str]) -> None:
    if env.get("BOTHUB_DATA_DIR"):
        cfg.data_dir = Path(env["BOTHUB_DATA_DIR"])
    if env.get("BOTHUB_WORKSPACE"):
        cfg.workspace = Path(env["BOTHUB_WORKSPACE"])
    cfg.log_level = env.get("BOTHUB_LOG_LEVEL") or cfg.log_level
    if env.get("BOTHUB_LANGUAGE") in ("en", "zh"):
        cfg.language = env["BOTHUB_LANGUAGE"]  # type: ignore[assignment]
    cfg.llm.api_key = env.get("OPENAI_API_KEY") or None
    cfg.llm.base_url = env.get("OPENAI_BASE_URL") or cfg.llm.base_url
    cfg.llm.chat_model = env.get("BOTHUB_MODEL") or cfg.llm.chat_model
    cfg.telegram.api_base = env.get("TELEGRAM_API_BASE") or cfg.telegram.api_base
    cfg.discord.api_base = env.get("DISCORD_API_BASE") or cfg.discord.api_base
    cfg.discord.gateway_url = env.get("DISCORD_GATEWAY_URL") or cfg.discord.gateway_url
    cfg.feishu.domain = env.get("FEISHU_DOMAIN") or cfg.feishu.domain
    if cfg.telegram.enabled is None:
        cfg.telegram.enabled = bool(env.get("TELEGRAM_BOT_TOKEN"))
    if cfg.discord.enabled is None:
        cfg.discord.enabled = bool(env.get("DISCORD_BOT_TOKEN"))
    if cfg.feishu.enabled is None:
        cfg.feishu.enabled = bool(env.get("FEISHU_APP_ID") and env.get("FEISHU_APP_SECRET"))


def llm_setup_hint() -> str:
    return (
        "No LLM endpoint is configured. Set OPENAI_API_KEY for OpenAI, or OPENAI_BASE_URL for any\n"
        "OpenAI-compatible server, e.g. OPENAI_BASE_URL=http://localhost:11434/v1 for Ollama or\n"
        "http://localhost:8000/v1 for vLLM (OPENAI_API_KEY may then be any placeholder), and\n"
        "BOTHUB_MODEL to the model name."
    )
