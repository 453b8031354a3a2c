"""Each platform's address for several apps (cloud.py): how Discord, Feishu, DingTalk and WeCom tell one app's
request from another's — by the bot token, the app's id and secret, an access token it was issued, or the
socket's first frame — and what each answers to credentials it does not know."""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from aiohttp import web

from tests.fakes.cloud import LATER, Cloud
from tests.fakes.dingtalk_api import FakeDingTalk
from tests.fakes.discord_api import FakeDiscord
from tests.fakes.discord_rules import error_response
from tests.fakes.feishu_api import FakeFeishu
from tests.fakes.wecom_ws import FakeWeCom


def _json(body: bytes) -> dict[str, Any]:
    try:
        parsed = json.loads(body or b"{}")
    except ValueError:
        return {}
    return parsed if isinstance(parsed, dict) else {}


def discord(apps: Sequence[FakeDiscord]) -> Cloud:
    """REST by the `Bot` token; interaction callbacks and followups by the interaction (its token is in the URL);
    the gateway by the token in IDENTIFY, after the HELLO every connection gets first."""

    def pick(request: web.Request, _body: bytes) -> int | None:
        parts = request.path.removeprefix("/api/v10/").split("/")
        for app in apps:
            if parts[0] == "interactions" and len(parts) > 2:
                state = app._interactions.get(parts[2])
                if state is not None and state.interaction_id == parts[1]:
                    return app.port
            elif parts[0] == "webhooks" and len(parts) > 1:
                if parts[1] == app.app_id:
                    return app.port
            elif parts[0] == "attachments":
                if request.path in app.stored_files:
                    return app.port
            elif request.headers.get("Authorization") == f"Bot {app.token}":
                return app.port
        return None

    def pick_frame(frame: str) -> int | None:
        sent = _json(frame.encode())
        if sent.get("op") != 2:  # a heartbeat before IDENTIFY: passed on with it
            return LATER
        token = str((sent.get("d") or {}).get("token", "")).removeprefix("Bot ")
        return next((app.port for app in apps if token == app.gateway_token), None)

    hello = json.dumps({"op": 10, "d": {"heartbeat_interval": 45000}, "s": None, "t": None})
    return Cloud(pick, lambda: error_response(401, 0, "401: Unauthorized"), sockets=("/gateway",),
                 pick_frame=pick_frame, greeting=hello)


def feishu(apps: Sequence[FakeFeishu]) -> Cloud:
    """The tenant token and the long connection's endpoint by the app's id and secret; every other call by the
    tenant token it carries (the long connection itself is at the URL the endpoint hands out)."""

    def pick(request: web.Request, body: bytes) -> int | None:
        sent = _json(body)
        for app in apps:
            if request.path.endswith("/tenant_access_token/internal"):
                if (sent.get("app_id"), sent.get("app_secret")) == (app.app_id, app.app_secret):
                    return app.port
            elif request.path == "/callback/ws/endpoint":
                if (sent.get("AppID"), sent.get("AppSecret")) == (app.app_id, app.app_secret):
                    return app.port
            elif request.headers.get("Authorization", "").removeprefix("Bearer ") in app._valid_tokens:
                return app.port
        return None

    return Cloud(pick, lambda: web.json_response({"code": 10014, "msg": "app secret invalid"}, status=400))


def dingtalk(apps: Sequence[FakeDingTalk]) -> Cloud:
    """The access token and the Stream connection by the app's key and secret; OpenAPI calls by the access token
    in their header, the older API's by the one in the query (session webhooks and the socket are at the URLs
    each app hands out)."""

    def pick(request: web.Request, body: bytes) -> int | None:
        sent = _json(body) if request.content_type == "application/json" else {}
        token = request.headers.get("x-acs-dingtalk-access-token") or request.query.get("access_token", "")
        for app in apps:
            if request.path == "/v1.0/oauth2/accessToken":
                if (sent.get("appKey"), sent.get("appSecret")) == (app.client_id, app.token_secret):
                    return app.port
            elif request.path == "/v1.0/gateway/connections/open":
                if (sent.get("clientId"), sent.get("clientSecret")) == (app.client_id, app.client_secret):
                    return app.port
            elif app.authorized(token):
                return app.port
        return None

    return Cloud(pick, lambda: web.json_response({"code": "InvalidAuthentication", "message": "unknown app"},
                                                status=401))


def wecom(apps: Sequence[FakeWeCom]) -> Cloud:
    """One long-connection address for every bot: a socket belongs to the bot its subscription names (an unknown
    bot id goes to the first bot's fake, which refuses it as WeCom does)."""

    def pick_frame(frame: str) -> int | None:
        bot_id = (_json(frame.encode()).get("body") or {}).get("bot_id")
        return next((app.port for app in apps if app.bot_id == bot_id), apps[0].port)

    return Cloud(lambda _request, _body: None, lambda: web.Response(status=404), sockets=("/ws",),
                 pick_frame=pick_frame)
