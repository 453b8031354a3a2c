"""A fake Discord (gateway v10 websocket + REST v10) on 127.0.0.1 port 0 for the real discord.py client.

It performs the real handshake (HELLO → IDENTIFY → READY → GUILD_CREATE, heartbeat ACKs) per shard (a
guild's events go to shard (guild_id >> 22) % shard_count, DMs to shard 0, as Discord routes them), lets a test
inject MESSAGE_CREATE / INTERACTION_CREATE dispatches, keeps the messages the bot posts so in-place
updates can be asserted, and is strict where Discord is: content over 2000 characters (50035), empty
messages (50006), bad components, a second acknowledgement of one interaction (40060), an
acknowledgement after Discord's 3 seconds (10062: the user sees "This interaction failed"), webhook calls
before the acknowledgement (10015) or after the 15-minute token life (50027), per-route rate limits with
the real headers (discord_limits.py), and scripted 429s. The gateway closes 4004 for a wrong token and
4014 for privileged intents the application has not enabled.
Every REST call is recorded. JSON replies carry Content-Type exactly `application/json`, because
discord.py parses a body as JSON only on that exact header.
"""

from __future__ import annotations

import asyncio
import itertools
import json
import re
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from aiohttp import WSMsgType, web

from tests.fakes.budgets import Judged, SlidingWindows
from tests.fakes.discord_events import DiscordEvents, Interaction
from tests.fakes.discord_files import AttachmentFiles
from tests.fakes.discord_guild import APP_ID as APP_ID
from tests.fakes.discord_guild import (
    BOT_ROLE_ID,
    BOT_USER,
    DM_CHANNEL_ID,
    GUILD_ID,
    HUMAN,
    guild_payload,
    now_iso,
)
from tests.fakes.discord_guild import CHANNEL2_ID as CHANNEL2_ID
from tests.fakes.discord_guild import CHANNEL_ID as CHANNEL_ID
from tests.fakes.discord_guild import OTHER_BOT as OTHER_BOT
from tests.fakes.discord_guild import THREAD2_ID as THREAD2_ID
from tests.fakes.discord_guild import THREAD_ID as THREAD_ID
from tests.fakes.discord_rules import (
    VOICE_MESSAGE,
    RouteLimits,
    as_seen_by,
    error_response,
    invalid_body,
    invalid_voice,
    json_response,
    route_bucket,
)
from tests.fakes.serve import serve_local

TOKEN = "TEST-TOKEN"
DISCORD_EPOCH_MS = 1420070400000
TOKEN_LIFETIME = 15 * 60.0
ACK_DEADLINE = 3.0  # seconds Discord waits for an interaction's first response
GLOBAL_PER_SECOND = 50  # requests a bot may make per second over every route
PRIVILEGED_INTENTS = {1 << 1: "GUILD_MEMBERS", 1 << 8: "GUILD_PRESENCES", 1 << 15: "MESSAGE_CONTENT"}


@dataclass(frozen=True)
class Call:
    method: str
    path: str  # below /api/v10, without the query string
    body: Any
    query: dict[str, str]


class FakeDiscord(AttachmentFiles, DiscordEvents, Judged):
    def __init__(self, clock: Callable[[], float] = time.time, token: str = TOKEN, user: dict = BOT_USER) -> None:
        """`token` and `user`: the application's bot (another one beside the default, for a DiscordCloud)."""
        super().__init__()
        self.token, self.user, self.app_id = token, user, str(user["id"])  # a bot's user id is its app's id
        Judged.__init__(self)
        # what Discord allows, only recorded (budgets.py): the route limits, and 50 requests a second per bot
        self.judge, self.global_judge = RouteLimits(), SlidingWindows(GLOBAL_PER_SECOND, 1.0)
        self.clock = clock  # unix seconds: interaction deadlines and token lifetimes
        self.limits = RouteLimits()
        self.enabled_intents = 1 << 15  # privileged intents switched on in the developer portal
        self.gateway_token = token  # what IDENTIFY must carry (a test may revoke it after REST login)
        self.expired: list[str] = []  # interaction ids acknowledged too late: "This interaction failed"
        self.gateway_closes: list[int] = []
        self.calls: list[Call] = []
        self.messages: dict[str, dict] = {}  # id -> message the bot posted, as it now reads
        self.identify: dict | None = None  # the latest IDENTIFY
        self.identifies: list[dict] = []
        self.other_guilds: list[dict] = []  # guilds beside the test guild (other_guild_payload), set before connecting
        self.shard_count = 1  # as the latest IDENTIFY said
        self.ready = asyncio.Event()
        self._interactions: dict[str, Interaction] = {}  # by token
        self._failures: list[tuple[str, re.Pattern[str], Callable[[], web.Response]]] = []
        self._serial = itertools.count(1)
        self._seq = itertools.count(1)
        self._shards: dict[int, web.WebSocketResponse] = {}  # shard id → its live gateway connection
        self._runner: web.AppRunner | None = None
        self.port = 0
        self.registered: dict[str | None, list[dict]] = {}  # guild id (None: global) → application commands
        self.extra_channels: tuple[str, ...] = ()  # more guild text channels, set before the bot connects
        self.extra_threads: tuple[tuple[str, str], ...] = ()  # more threads: (id, parent channel id)
        self.dm_channels = {DM_CHANNEL_ID}  # one-to-one channels: messages there carry no guild

    async def start(self) -> None:
        app = web.Application()
        app.router.add_get("/gateway", self._gateway)
        app.router.add_route("*", "/api/v10/{tail:.*}", self._rest)
        app.router.add_get("/attachments/{tail:.*}", self.serve_attachment)
        self._runner, self.port = await serve_local(app)

    async def stop(self) -> None:
        for ws in list(self._shards.values()):
            await ws.close()
        if self._runner is not None:
            await self._runner.cleanup()

    @property
    def api_base(self) -> str:
        return f"http://127.0.0.1:{self.port}/api/v10"

    @property
    def gateway_url(self) -> str:
        return f"ws://127.0.0.1:{self.port}/gateway"

    def snowflake(self, age: float = 0.0) -> str:
        ms = int((self.clock() - age) * 1000) - DISCORD_EPOCH_MS
        return str((ms << 22) | (next(self._serial) & 0xFFF))

    # ------------------------------------------------------------- scripting
    def fail(self, method: str, path_regex: str, response: Callable[[], web.Response], times: int = 1) -> None:
        """Answer the next `times` matching calls with `response()` instead of handling them."""
        self._failures.extend([(method, re.compile(path_regex), response)] * times)

    def rate_limit(self, method: str, path_regex: str, retry_after: float, times: int = 1) -> None:
        """Answer 429 exactly as Discord does (the `Via` header tells discord.py it is not Cloudflare)."""
        body = {"message": "You are being rate limited.", "retry_after": retry_after, "global": False}
        headers = {"Via": "1.1 google", "Retry-After": str(max(1, round(retry_after))),
                   "X-RateLimit-Scope": "user"}
        self.fail(method, path_regex, lambda: json_response(body, 429, headers), times)

    def forbid(self, method: str, path_regex: str) -> None:
        self.fail(method, path_regex, lambda: error_response(403, 50013, "Missing Permissions"))

    def calls_to(self, method: str, path_regex: str) -> list[Call]:
        return [c for c in self.calls if c.method == method and re.fullmatch(path_regex, c.path)]

    async def wait_for(self, predicate: Callable[[], bool], within: float = 5.0) -> None:
        deadline = time.monotonic() + within
        while not predicate():
            if time.monotonic() > deadline:
                raise AssertionError(f"timed out; calls so far: {[(c.method, c.path) for c in self.calls]}")
            await asyncio.sleep(0.01)

    def shard_of(self, guild_id: str | None) -> int:
        return (int(guild_id) >> 22) % self.shard_count if guild_id else 0

    def connected_shards(self) -> set[int]:
        return {shard for shard, ws in self._shards.items() if not ws.closed}

    async def dispatch(self, event: str, d: dict) -> None:
        """Send an event on the shard that carries its guild (shard 0 for DMs)."""
        ws = self._shards.get(self.shard_of(d.get("guild_id")))
        assert ws is not None and not ws.closed, "gateway not connected"
        if event == "MESSAGE_CREATE":
            d = as_seen_by(d, int((self.identify or {}).get("intents", 0)), self.app_id, BOT_ROLE_ID)
        await self._send(ws, event, d)

    async def _send(self, ws: web.WebSocketResponse, event: str, d: dict) -> None:
        await ws.send_json({"op": 0, "t": event, "s": next(self._seq), "d": d})

    # --------------------------------------------------------------- gateway
    async def _gateway(self, request: web.Request) -> web.WebSocketResponse:
        ws = web.WebSocketResponse()
        await ws.prepare(request)
        shard = 0
        await ws.send_json({"op": 10, "d": {"heartbeat_interval": 45000}, "s": None, "t": None})
        async for frame in ws:
            if frame.type != WSMsgType.TEXT:
                continue
            op = json.loads(frame.data)
            if op["op"] == 1:
                await ws.send_json({"op": 11, "d": None, "s": None, "t": None})
            elif op["op"] == 2:
                self.identify = op["d"]
                self.identifies.append(op["d"])
                if close := self._refuse_identify(op["d"]):
                    self.gateway_closes.append(close[0])
                    await ws.close(code=close[0], message=close[1].encode())
                    break
                shard, self.shard_count = op["d"].get("shard") or (0, 1)
                self._shards[shard] = ws
                every = (guild_payload(self.extra_channels, self.extra_threads), *self.other_guilds)
                guilds = [g for g in every if self.shard_of(g["id"]) == shard]
                await self._send(ws, "READY", {
                    "v": 10, "user": self.user, "session_id": f"session-{shard}",
                    "resume_gateway_url": self.gateway_url,
                    "guilds": [{"id": g["id"], "unavailable": True} for g in guilds], "private_channels": [],
                    "relationships": [], "application": {"id": self.app_id, "flags": 0},
                    "shard": [shard, self.shard_count]})
                for guild in guilds:
                    await self._send(ws, "GUILD_CREATE", guild)
                self.ready.set()
        if self._shards.get(shard) is ws:
            del self._shards[shard]
        return ws

    def _refuse_identify(self, identify: dict) -> tuple[int, str] | None:
        if identify.get("token") not in (self.gateway_token, f"Bot {self.gateway_token}"):
            return 4004, "Authentication failed."
        asked = int(identify.get("intents", 0))
        if any(asked & bit and not self.enabled_intents & bit for bit in PRIVILEGED_INTENTS):
            return 4014, "Disallowed intent(s)."
        return None

    # ------------------------------------------------------------------ REST
    async def _rest(self, request: web.Request) -> web.StreamResponse:
        path = "/" + request.match_info["tail"]
        parts = path.strip("/").split("/")
        body, self._attached = await self.read_body(request, parts[1] if len(parts) > 1 else "")
        self.calls.append(Call(request.method, path, body, dict(request.query)))
        for i, (method, pattern, response) in enumerate(self._failures):
            if method == request.method and pattern.fullmatch(path):
                del self._failures[i]
                return response()
        # interaction callbacks and followups authenticate with the token in the URL, not the bot token
        if parts[0] not in ("interactions", "webhooks") and request.headers.get("Authorization") != f"Bot {self.token}":
            return error_response(401, 0, "401: Unauthorized")
        if parts[0] not in ("interactions", "webhooks") and self.global_judge.over():
            self.breach("global", "bot")
        bucket = route_bucket(request.method, parts)
        if bucket is not None and self.judge.take(bucket)[1] is not None:
            self.breach("per route", bucket)
        if bucket is None:
            return self._route(request.method, path, parts, body)
        headers, retry_after = self.limits.take(bucket)
        if retry_after is not None:
            return json_response({"message": "You are being rate limited.", "retry_after": round(retry_after, 3),
                          "global": False}, 429, headers)
        response = self._route(request.method, path, parts, body)
        response.headers.update(headers)
        return response

    def _route(self, method: str, path: str, parts: list[str], body: Any) -> web.Response:
        if path == "/users/@me":
            return json_response(self.user)
        if path == "/oauth2/applications/@me":
            return json_response({"id": self.app_id, "name": self.user["username"], "description": "", "icon": None,
                                  "bot_public": False, "bot_require_code_grant": False, "owner": HUMAN,
                                  "verify_key": "00" * 32, "flags": 0, "summary": "", "team": None})
        if path == "/gateway/bot":
            return json_response({"url": self.gateway_url, "shards": 1, "session_start_limit": {
                "total": 1000, "remaining": 999, "reset_after": 0, "max_concurrency": 1}})
        if parts[0] == "applications" and parts[-1] == "commands":
            guild_id = parts[3] if len(parts) > 3 else None
            if guild_id is not None and guild_id != GUILD_ID:  # the bot was never invited there
                return error_response(403, 50001, "Missing Access")
            if method == "GET":
                return json_response(self.registered.get(guild_id, []))
            if method == "PUT":
                return self._put_commands(body, parts)
        if parts[0] == "interactions" and parts[-1] == "callback":
            return self._callback(parts[1], parts[2], body)
        if parts[0] == "webhooks" and len(parts) >= 3:
            return self._webhook(method, parts[2], parts[4] if len(parts) > 4 else None, body)
        if parts[0] == "channels" and parts[-1] == "typing":
            return web.Response(status=204)
        if parts[0] == "channels" and parts[-1] == "messages" and method == "POST":
            return self._create(parts[1], body)
        if parts[0] == "channels" and parts[-2] == "messages" and method == "PATCH":
            return self._update(parts[-1], body)
        return error_response(404, 0, "404: Not Found")

    def _put_commands(self, body: list[dict], parts: list[str]) -> web.Response:
        for command in body:
            if not re.fullmatch(r"[-_a-z0-9]{1,32}", command.get("name", "")) or \
                    not 1 <= len(command.get("description", "")) <= 100:
                return error_response(400, 50035, "Invalid Form Body")
        guild_id = parts[3] if len(parts) > 3 else None
        self.registered[guild_id] = [{**c, "id": self.snowflake(), "application_id": self.app_id, "version": "1",
                                      "guild_id": guild_id, "default_member_permissions": None} for c in body]
        return json_response(self.registered[guild_id])

    def _callback(self, interaction_id: str, token: str, body: dict) -> web.Response:
        state = self._interactions.get(token)
        if state is None or state.interaction_id != interaction_id:
            return error_response(404, 10062, "Unknown interaction")
        if state.acked:
            return error_response(400, 40060, "Interaction has already been acknowledged.")
        if self.clock() - state.created > ACK_DEADLINE:
            self.expired.append(interaction_id)
            return error_response(404, 10062, "Unknown interaction")
        rtype = body["type"]
        if rtype == 8:
            choices = body["data"]["choices"]
            if len(choices) > 25 or any(not 1 <= len(c["name"]) <= 100 for c in choices):
                return error_response(400, 50035, "Invalid Form Body")
        elif rtype in (4, 7) and (problem := invalid_body(body.get("data") or {})):
            return problem
        state.acked = True
        resource: dict[str, Any] = {"type": rtype}
        if rtype in (4, 5):  # a new response message (type 5 shows "thinking…" until edited)
            message = self._store(state.channel_id, body.get("data") or {}, flags=128 if rtype == 5 else 0)
            state.original_id = message["id"]
            resource["message"] = message
        elif rtype == 7 and state.original_id:
            resource["message"] = self._apply(state.original_id, body.get("data") or {})
        return json_response({"interaction": {"id": interaction_id, "type": state.type,
                                              "response_message_loading": rtype == 5,
                                              "response_message_ephemeral": False}, "resource": resource})

    def _webhook(self, method: str, token: str, target: str | None, body: dict | None) -> web.Response:
        state = self._interactions.get(token)
        if state is None or not state.acked:
            return error_response(404, 10015, "Unknown Webhook")
        if self.clock() - state.created > TOKEN_LIFETIME:
            return error_response(401, 50027, "Invalid Webhook Token")
        if method == "POST" and target is None:
            return self._create(state.channel_id, body or {}, webhook_id=self.app_id)
        if method == "PATCH" and target is not None:
            message_id = state.original_id if target == "@original" else target
            return self._update(message_id or "", body or {})
        return error_response(405, 0, "405: Method Not Allowed")

    def _create(self, channel_id: str, body: dict, **extra: Any) -> web.Response:
        if problem := invalid_body(body):
            return problem
        if not (body.get("content") or body.get("embeds") or body.get("components") or self._attached):
            return error_response(400, 50006, "Cannot send an empty message")
        flags = int(body.get("flags") or 0)
        if flags & VOICE_MESSAGE:
            if problem := invalid_voice(body, self._attached):
                return problem
            meta = body["attachments"][0]
            self._attached[0].update(duration_secs=meta["duration_secs"], waveform=meta["waveform"])
        return json_response(self._store(channel_id, body, flags=flags & VOICE_MESSAGE,
                                         attachments=self._attached, **extra))

    def _update(self, message_id: str, body: dict) -> web.Response:
        if message_id not in self.messages:
            return error_response(404, 10008, "Unknown Message")
        if problem := invalid_body(body):
            return problem
        return json_response(self._apply(message_id, body))

    def _store(self, channel_id: str, body: dict, flags: int = 0, **extra: Any) -> dict:
        message = {"id": self.snowflake(), "channel_id": channel_id, "author": self.user,
                   "content": body.get("content") or "", "timestamp": now_iso(), "edited_timestamp": None,
                   "tts": False, "mention_everyone": False, "mentions": [], "mention_roles": [],
                   "embeds": body.get("embeds") or [], "components": body.get("components") or [],
                   "pinned": False, "type": 0, "flags": flags, "attachments": [], **extra}
        if channel_id not in self.dm_channels:
            message["guild_id"] = GUILD_ID
        self.messages[message["id"]] = message
        return message

    def _apply(self, message_id: str, body: dict) -> dict:
        message = self.messages[message_id]
        for key in ("content", "embeds", "components"):
            if key in body:
                message[key] = body[key] or ([] if key != "content" else "")
        message["flags"] = message["flags"] & ~128
        message["edited_timestamp"] = now_iso()
        return message

