"""Credentials at rest: AES-256-GCM under a key from the environment (`BOTHUB_SECRET_KEY`), so a copy of the
database or an export holds no usable token. Each sealed value is bound to what it belongs to (the associated
data names the identity), so a sealed blob moved to another row does not open."""

from __future__ import annotations

import base64
import binascii
import hashlib
import json
import os
from collections.abc import Mapping

from bot.config import ConfigError

KEY_ENV = "BOTHUB_SECRET_KEY"
NEW_KEY_ENV = "BOTHUB_NEW_SECRET_KEY"  # `bothub secrets rotate-key` re-seals everything under this one
_VERSION = "v1"  # what prefixes every sealed value: the format, should it ever change
_NONCE = 12


class SecretKeyError(ConfigError):
    """No key, a wrong key, or a value that was tampered with; worded for the person running the hub."""


def new_key() -> str:
    """A fresh random key, as `BOTHUB_SECRET_KEY` takes it (32 bytes, URL-safe base64)."""
    return base64.urlsafe_b64encode(os.urandom(32)).decode()


def key_bytes(text: str) -> bytes:
    """A 32-byte key: the base64 `new_key` prints, or any other text stretched by SHA-256 (a passphrase)."""
    text = text.strip()
    try:
        raw = base64.urlsafe_b64decode(text.encode())
    except (binascii.Error, ValueError):
        raw = b""
    return raw if len(raw) == 32 else hashlib.sha256(text.encode()).digest()


class Sealer:
    """Seals and opens credential sets (env var → value) with one key."""

    def __init__(self, key: str) -> None:
        from cryptography.hazmat.primitives.ciphers.aead import AESGCM  # only where credentials are stored

        if not key.strip():
            raise SecretKeyError(f"{KEY_ENV} is empty")
        self._aead = AESGCM(key_bytes(key))

    @classmethod
    def from_env(cls, env: Mapping[str, str], name: str = KEY_ENV) -> Sealer:
        key = env.get(name, "")
        if not key.strip():
            raise SecretKeyError(f"{name} is not set: stored credentials need it (`bothub secrets new-key` "
                                 "prints a fresh one; keep it outside the database)")
        return cls(key)

    def seal(self, values: Mapping[str, str], owner: str) -> str:
        nonce = os.urandom(_NONCE)
        sealed = self._aead.encrypt(nonce, json.dumps(dict(values)).encode(), owner.encode())
        return f"{_VERSION}:{base64.b64encode(nonce + sealed).decode()}"

    def open(self, sealed: str, owner: str) -> dict[str, str]:
        from cryptography.exceptions import InvalidTag

        version, _, body = sealed.partition(":")
        if version != _VERSION:
            raise SecretKeyError(f"credentials of {owner}: unknown format {version!r}")
        try:
            raw = base64.b64decode(body.encode())
            plain = self._aead.decrypt(raw[:_NONCE], raw[_NONCE:], owner.encode())
        except (InvalidTag, binascii.Error, ValueError) as e:
            raise SecretKeyError(f"credentials of {owner} do not open with {KEY_ENV}: a different key, "
                                 "or the stored value was changed") from e
        values = json.loads(plain)
        return {str(k): str(v) for k, v in values.items()}


def masked(value: str) -> str:
    """How a stored secret is shown after entry: never again in full, only enough to tell two apart."""
    return "••••" + value[-4:] if len(value) > 11 else "••••"
