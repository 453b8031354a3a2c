"""Keep secrets out of logs: a logging filter that masks known secret values and token-shaped strings.

Libraries log request URLs (some platforms put the bot token in every URL) and exception texts (a 401
body may echo part of an API key), so masking happens once, at the handlers, for every logger. Which env
vars hold secrets: the LLM key here, the rest from each adapter's spec.
"""

from __future__ import annotations

import logging
import re
import stat
from collections.abc import Iterable, Mapping, MutableMapping
from pathlib import Path

from bot.adapter import installed_specs

# a database URL may hold a password
CORE_SECRET_ENV_VARS = ("OPENAI_API_KEY", "BOTHUB_DATABASE_URL", "BOTHUB_ADMIN_PASSWORD")
SECRET_ENV_SUFFIX = "_API_KEY"  # llm.providers name their keys' env vars; README suggests this ending
MASK = "***"
MIN_SECRET_LEN = 6  # shorter values would mask ordinary words

_TOKEN_PATTERNS = (
    (re.compile(r"\bbot(\d{3,}):[A-Za-z0-9_-]{8,}"), r"bot\1:" + MASK),  # a bot token in an API URL path
    (re.compile(r"\b(\d{6,}):[A-Za-z0-9_-]{30,}"), r"\1:" + MASK),  # a bare "<bot id>:<secret>" token
    (re.compile(r"\b(Bearer)\s+[A-Za-z0-9._~+/=-]{8,}", re.IGNORECASE), r"\1 " + MASK),
    (re.compile(r"\b[A-Za-z0-9_-]{20,}\.[A-Za-z0-9_-]{5,}\.[A-Za-z0-9_-]{20,}"), MASK),  # three dotted parts
    (re.compile(r"\bsk-[A-Za-z0-9_-]{8,}"), "sk-" + MASK),
)
# Key names that hold a secret, matched whole: `context_tokens:` or `max_tokens:` are not secrets.
SECRET_KEYS = frozenset({
    "api_key", "apikey", "token", "bot_token", "access_token", "secret", "app_secret", "client_secret",
    "webhook_secret", "password", "encrypt_key", "verification_token",
})


def redact(text: str, secrets: Iterable[str] = ()) -> str:
    """`text` with every known secret value and every token-shaped string masked."""
    for value in sorted(secrets, key=len, reverse=True):
        if len(value) >= MIN_SECRET_LEN:
            text = text.replace(value, MASK)
    for pattern, replacement in _TOKEN_PATTERNS:
        text = pattern.sub(replacement, text)
    return text


def secret_env_vars() -> tuple[str, ...]:
    """The LLM key and every secret an installed adapter's spec declares."""
    return CORE_SECRET_ENV_VARS + tuple(name for spec in installed_specs() for name in spec.secrets)


def secret_values(env: Mapping[str, str]) -> list[str]:
    """Declared secrets, and any `*_API_KEY` variable (where model providers' keys are named to live)."""
    names = {*secret_env_vars(), *(name for name in env if name.endswith(SECRET_ENV_SUFFIX))}
    return [env[name] for name in sorted(names) if env.get(name)]


class RedactingFilter(logging.Filter):
    """Rewrites each record's final message (args and traceback included) with secrets masked."""

    def __init__(self, secrets: Iterable[str]) -> None:
        super().__init__("redact")
        self.secrets = [s for s in secrets if len(s) >= MIN_SECRET_LEN]

    def filter(self, record: logging.LogRecord) -> bool:
        message = record.getMessage()
        if record.exc_info and not record.exc_text:
            record.exc_text = logging.Formatter().formatException(record.exc_info)
        if record.exc_text:
            record.exc_text = redact(record.exc_text, self.secrets)
        record.msg, record.args = redact(message, self.secrets), None
        if record.stack_info:
            record.stack_info = redact(record.stack_info, self.secrets)
        return True


def install(env: Mapping[str, str], logger: logging.Logger | None = None) -> RedactingFilter:
    """Attach one filter to every handler of `logger` (the root by default); idempotent per handler."""
    logger = logger or logging.getLogger()
    flt = RedactingFilter(secret_values(env))
    for handler in logger.handlers:
        for old in [f for f in handler.filters if isinstance(f, RedactingFilter)]:
            handler.removeFilter(old)
        handler.addFilter(flt)
    return flt


def route_library_loggers() -> None:
    """Send every library's records through the root handlers, where the redaction sits.

    Some SDKs print through handlers of their own (one writes straight to stdout), which would bypass
    the filter: those handlers are removed, and loggers created later, by libraries imported lazily,
    cannot add any.
    """
    for logger in list(logging.root.manager.loggerDict.values()):
        if isinstance(logger, logging.Logger):
            for handler in list(logger.handlers):
                logger.removeHandler(handler)
            logger.propagate = True
    logging.setLoggerClass(_RoutedLogger)


class _RoutedLogger(logging.Logger):
    """A logger whose records always go to the root's (redacting) handlers, never a handler of its own."""

    def addHandler(self, hdlr: logging.Handler) -> None:
        self.propagate = True


def scrub_environment(environ: MutableMapping[str, str]) -> None:
    """Drop every secret from the process environment, so no child process ever inherits one."""
    for name in secret_env_vars():
        environ.pop(name, None)


def _secret_key(text: str) -> bool:
    """Does a line set a key named exactly like a secret (`api_key: …`, `OPENAI_API_KEY=…`)?"""
    names = "|".join(sorted(SECRET_KEYS | {name.lower() for name in secret_env_vars()}))
    return re.search(rf"(?im)^[\s-]*[\"']?({names})[\"']?\s*[:=]\s*[^\s#]", text) is not None


def readable_secrets_warning(path: Path | None) -> str | None:
    """A warning when a config file that looks like it holds secrets is readable by group or others."""
    if path is None:
        return None
    try:
        mode = path.stat().st_mode
        text = path.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return None
    if not mode & (stat.S_IRGRP | stat.S_IROTH) or not (_secret_key(text) or redact(text) != text):
        return None
    return (f"config file {path} seems to contain secrets and is readable by other users "
            f"(mode {stat.S_IMODE(mode):o}); run: chmod 600 {path} — or better, keep secrets in the environment")


def add_secrets(values: Iterable[str], logger: logging.Logger | None = None) -> None:
    """Credentials learnt after start-up (an identity's, opened from the store) are masked from then on."""
    fresh = [v for v in values if len(v) >= MIN_SECRET_LEN]
    for handler in (logger or logging.getLogger()).handlers:
        if isinstance(own := getattr(handler, "secrets", None), list):  # the dashboard's log ring masks its own
            setattr(handler, "secrets", sorted({*own, *fresh}, key=len, reverse=True))  # noqa: B010
        for flt in handler.filters:
            if isinstance(flt, RedactingFilter):
                flt.secrets = sorted({*flt.secrets, *fresh}, key=len, reverse=True)
