"""WXBizMsgCrypt against the fake's own cipher (tests/fakes/wecom_callback.py) and against ciphertexts built
by hand that are wrong in one way each: every one is a CryptoError (the request refused), never a crash or a
message taken in."""

from __future__ import annotations

import base64
import os
import struct

import pytest
from cryptography.hazmat.primitives.ciphers import Cipher, algorithms, modes

from adapters.wecom import crypto
from tests.fakes.wecom_callback import ENCODING_AES_KEY, TOKEN, seal, sign, unseal

KEY = crypto.key_of(ENCODING_AES_KEY)


def sealed(raw: bytes, pad: int | None = None) -> str:
    """`raw` padded to 32-byte blocks (with `pad` as every padding byte's value when given) and encrypted."""
    count = 32 - len(raw) % 32
    cipher = Cipher(algorithms.AES(KEY), modes.CBC(KEY[:16])).encryptor()
    padded = raw + bytes([count if pad is None else pad]) * count
    return base64.b64encode(cipher.update(padded) + cipher.finalize()).decode()


def plaintext(message: bytes, receive_id: bytes = b"", length: int | None = None) -> bytes:
    return os.urandom(16) + struct.pack(">I", len(message) if length is None else length) + message + receive_id


def test_both_ciphers_read_each_other() -> None:
    assert base64.b64decode(ENCODING_AES_KEY + "=") == KEY
    assert crypto.decrypt(KEY, seal('{"msgid": "m-1", "text": "你好"}')) == '{"msgid": "m-1", "text": "你好"}'
    assert unseal(crypto.encrypt(KEY, "a reply")) == "a reply"
    assert crypto.decrypt(KEY, sealed(plaintext(b"for the corp", b"ww-corp")), "ww-corp") == "for the corp"


def test_a_key_is_43_base64_characters_of_32_bytes() -> None:
    assert crypto.key_of(f" {ENCODING_AES_KEY[:20]}\n{ENCODING_AES_KEY[20:]} ") == KEY  # as pasted from a console
    with pytest.raises(crypto.CryptoError, match="not base64"):
        crypto.key_of("not*base64" * 4 + "abc")
    with pytest.raises(crypto.CryptoError, match="not 32 bytes"):
        crypto.key_of(base64.b64encode(bytes(16)).decode())


@pytest.mark.parametrize(("encrypted", "problem"), [
    ("this is not base64!", "not base64"),
    ("", "not whole AES blocks"),
    (base64.b64encode(bytes(15)).decode(), "not whole AES blocks"),
    (sealed(plaintext(b"hello"), pad=0), "bad padding"),
    (sealed(plaintext(b"hello"), pad=33), "bad padding"),
    (sealed(os.urandom(16)), "too short"),
    (sealed(plaintext(b"hello", length=500)), "length or receive id"),
    (sealed(plaintext(b"hello", b"someone-else")), "length or receive id"),
    (sealed(plaintext(b"\xff\xfe not text")), "not UTF-8"),
], ids=["text", "empty", "15 bytes", "pad 0", "pad 33", "one block", "length", "receive id", "not text"])  # the
# ciphertexts take a random IV: as ids they would differ between pytest-xdist's workers, which then refuse to run
def test_a_ciphertext_wrong_in_any_way_is_refused(encrypted: str, problem: str) -> None:
    with pytest.raises(crypto.CryptoError, match=problem):
        crypto.decrypt(KEY, encrypted)


def test_a_receive_id_must_be_the_one_expected() -> None:
    encrypted = sealed(plaintext(b"hello", b"ww-corp"))
    assert crypto.decrypt(KEY, encrypted, "ww-corp") == "hello"
    with pytest.raises(crypto.CryptoError):
        crypto.decrypt(KEY, encrypted, "ww-other")


@pytest.mark.parametrize("missing", ["given", "timestamp", "nonce", "encrypted"])
def test_a_signature_needs_every_part(missing: str) -> None:
    parts = {"timestamp": "1700000000", "nonce": "n-1", "encrypted": seal("x")}
    parts["given"] = sign(TOKEN, parts["timestamp"], parts["nonce"], parts["encrypted"])
    crypto.check(TOKEN, parts["timestamp"], parts["nonce"], parts["encrypted"], parts["given"])
    with pytest.raises(crypto.CryptoError, match="missing"):
        crypto.check(TOKEN, **{**parts, missing: ""})
    with pytest.raises(crypto.CryptoError, match="does not match"):
        crypto.check("another-token", **parts)
