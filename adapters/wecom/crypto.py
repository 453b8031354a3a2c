"""WeCom's message encryption (WXBizMsgCrypt) for callbacks, and the media decryption of both modes.

EncodingAESKey is 43 base64 characters: with one "=" it decodes to the 32-byte AES-256 key, whose first 16
bytes are the CBC IV. A callback plaintext is random(16) + length(4, big-endian) + message + receive id,
PKCS#7-padded to a multiple of 32 bytes; an AI bot's receive id is empty. msg_signature is the SHA-1 of the
token, timestamp, nonce and ciphertext, sorted and joined. A media file is the same cipher under the
message's own `aeskey`.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import hmac
import os
import struct

from cryptography.hazmat.primitives.ciphers import Cipher, algorithms, modes

BLOCK = 32  # WeCom pads to 32 bytes, not AES's 16


class CryptoError(Exception):
    """A signature, key or ciphertext that is not WeCom's: the request is refused."""


def key_of(encoded: str) -> bytes:
    """An EncodingAESKey (43 characters) or a media aeskey (base64, padding optional) → the 32-byte key."""
    text = "".join(encoded.split())
    try:
        key = base64.b64decode(text + "=" * (-len(text) % 4), validate=True)
    except (binascii.Error, ValueError) as e:
        raise CryptoError("the AES key is not base64") from e
    if len(key) != 32:
        raise CryptoError("the AES key is not 32 bytes (an EncodingAESKey has 43 characters)")
    return key


def signature(token: str, timestamp: str, nonce: str, encrypted: str) -> str:
    return hashlib.sha1("".join(sorted((token, timestamp, nonce, encrypted))).encode()).hexdigest()


def check(token: str, timestamp: str, nonce: str, encrypted: str, given: str) -> None:
    if not (given and timestamp and nonce and encrypted):
        raise CryptoError("signature, timestamp, nonce or ciphertext missing")
    if not hmac.compare_digest(signature(token, timestamp, nonce, encrypted), given):
        raise CryptoError("msg_signature does not match")


def decrypt_bytes(key: bytes, data: bytes) -> bytes:
    if not data or len(data) % 16:
        raise CryptoError("ciphertext is not whole AES blocks")
    decryptor = Cipher(algorithms.AES(key), modes.CBC(key[:16])).decryptor()
    plain = decryptor.update(data) + decryptor.finalize()
    pad = plain[-1]
    if not 1 <= pad <= BLOCK or plain[-pad:] != bytes([pad]) * pad:
        raise CryptoError("bad padding")
    return plain[:-pad]


def decrypt(key: bytes, encrypted: str, receive_id: str = "") -> str:
    try:
        raw = decrypt_bytes(key, base64.b64decode(encrypted, validate=True))
    except (binascii.Error, ValueError) as e:
        raise CryptoError("ciphertext is not base64") from e
    if len(raw) < 20:
        raise CryptoError("plaintext too short")
    (length,) = struct.unpack(">I", raw[16:20])
    message, rest = raw[20:20 + length], raw[20 + length:]
    if len(message) != length or rest != receive_id.encode():
        raise CryptoError("plaintext length or receive id wrong")
    try:
        return message.decode()
    except UnicodeDecodeError as e:
        raise CryptoError("plaintext is not UTF-8") from e


def encrypt(key: bytes, message: str, receive_id: str = "") -> str:
    data = message.encode()
    plain = os.urandom(16) + struct.pack(">I", len(data)) + data + receive_id.encode()
    pad = BLOCK - len(plain) % BLOCK
    encryptor = Cipher(algorithms.AES(key), modes.CBC(key[:16])).encryptor()
    return base64.b64encode(encryptor.update(plain + bytes([pad]) * pad) + encryptor.finalize()).decode()
