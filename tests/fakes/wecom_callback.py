"""WeCom's side of the encrypted callback mode, with real cryptography: it encrypts and signs what it POSTs to
the bot's URL (the console's URL check too), checks the signature of every encrypted answer, polls an open
stream until `finish` (giving up after the stream window, as WeCom drops it), and serves the single-use
`response_url` of each message.

The cipher is written out here from WeCom's description (WXBizMsgCrypt), not taken from the adapter, so the
two are checked against each other.
"""

from __future__ import annotations

import asyncio
import base64
import hashlib
import json
import os
import struct
import time
from typing import Any

import aiohttp
from aiohttp import web
from cryptography.hazmat.primitives.ciphers import Cipher, algorithms, modes

from tests.fakes.serve import serve_local
from tests.fakes.wecom_rules import STREAM_WINDOW, text_problem

TOKEN = "fakeCallbackToken"
ENCODING_AES_KEY = base64.b64encode(bytes(range(1, 33))).decode().rstrip("=")  # 43 characters


def _key(aes_key: str) -> bytes:
    return base64.b64decode(aes_key + "=")


def sign(token: str, timestamp: str, nonce: str, encrypted: str) -> str:
    return hashlib.sha1("".join(sorted([token, timestamp, nonce, encrypted])).encode()).hexdigest()


def seal(plain: str, aes_key: str = ENCODING_AES_KEY) -> str:
    key, data = _key(aes_key), plain.encode()
    raw = os.urandom(16) + struct.pack(">I", len(data)) + data  # an AI bot's receive id is empty
    raw += bytes([32 - len(raw) % 32]) * (32 - len(raw) % 32)
    enc = Cipher(algorithms.AES(key), modes.CBC(key[:16])).encryptor()
    return base64.b64encode(enc.update(raw) + enc.finalize()).decode()


def unseal(encrypted: str, aes_key: str = ENCODING_AES_KEY) -> str:
    key = _key(aes_key)
    dec = Cipher(algorithms.AES(key), modes.CBC(key[:16])).decryptor()
    raw = dec.update(base64.b64decode(encrypted)) + dec.finalize()
    raw = raw[:-raw[-1]]
    (length,) = struct.unpack(">I", raw[16:20])
    assert raw[20 + length:] == b"", "an AI bot's receive id is empty"
    return raw[20:20 + length].decode()


class FakeWeComCallbacks:
    def __init__(self, bot_url: str, token: str = TOKEN, aes_key: str = ENCODING_AES_KEY) -> None:
        """`token` and `aes_key`: the bot's (another bot beside the default one)."""
        self.bot_url, self.token, self.aes_key = bot_url, token, aes_key
        self.posts: list[tuple[float, dict[str, Any]]] = []  # what reached a response_url, with its time
        self.answers: list[dict[str, Any]] = []  # every decrypted answer of the bot
        self._used: set[str] = set()
        self._n = 0

    async def start(self) -> None:
        app = web.Application()
        app.router.add_post("/respond/{id}", self._respond)
        self._runner, port = await serve_local(app)
        self.base = f"http://127.0.0.1:{port}"
        self.http = aiohttp.ClientSession()

    async def stop(self) -> None:
        await self.http.close()
        await self._runner.cleanup()

    def response_url(self) -> str:
        self._n += 1
        return f"{self.base}/respond/{self._n}"

    def query(self, encrypted: str, *, signature: str | None = None) -> dict[str, str]:
        stamp, nonce = str(int(time.time())), os.urandom(4).hex()
        sig = sign(self.token, stamp, nonce, encrypted) if signature is None else signature
        return {"msg_signature": sig, "timestamp": stamp, "nonce": nonce}

    async def verify_url(self, *, signature: str | None = None) -> tuple[int, str]:
        """The console's check: the echostr decrypted and echoed back as plain text."""
        echostr = seal("echo-" + os.urandom(4).hex(), self.aes_key)
        params = {**self.query(echostr, signature=signature), "echostr": echostr}
        async with self.http.get(self.bot_url, params=params) as resp:
            return resp.status, await resp.text()

    async def post(self, body: dict[str, Any], *, signature: str | None = None) -> tuple[int, dict[str, Any] | None]:
        """One callback; the bot's decrypted answer (None for an empty one), its signature checked."""
        encrypted = seal(json.dumps(body, ensure_ascii=False), self.aes_key)
        async with self.http.post(self.bot_url, params=self.query(encrypted, signature=signature),
                                  json={"encrypt": encrypted}) as resp:
            text = await resp.text()
            if resp.status != 200 or not text:
                return resp.status, None
        sealed = json.loads(text)
        expected = sign(self.token, sealed["timestamp"], sealed["nonce"], sealed["encrypt"])
        assert sealed["msgsignature"] == expected, "the bot's answer is not signed"
        answer: dict[str, Any] = json.loads(unseal(sealed["encrypt"], self.aes_key))
        self.answers.append(answer)
        return resp.status, answer

    async def poll(self, first: dict[str, Any], msgid: str, *, every: float = 0.05) -> str:
        """Refresh an open stream as WeCom does until it finishes; its final content."""
        stream, started = first["stream"], time.monotonic()
        while not stream.get("finish"):
            if time.monotonic() - started > STREAM_WINDOW:
                raise AssertionError("the stream was not finished in WeCom's window")
            await asyncio.sleep(every)
            _, answer = await self.post({"msgid": f"{msgid}-refresh-{time.monotonic_ns()}", "msgtype": "stream",
                                         "stream": {"id": stream["id"]}})
            assert answer is not None and answer["stream"]["id"] == stream["id"]
            assert not text_problem(answer["stream"]["content"])
            stream = answer["stream"]
        return str(stream["content"])

    async def _respond(self, request: web.Request) -> web.Response:
        url = str(request.url.path)
        if url in self._used:
            return web.json_response({"errcode": 846605, "errmsg": "response_url used already"})
        self._used.add(url)
        self.posts.append((time.monotonic(), await request.json()))
        return web.json_response({"errcode": 0, "errmsg": "ok"})

